package dev.rlmmcp.transport.peer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.cluster.PeerAuth;
import dev.rlmmcp.cluster.Router;
import dev.rlmmcp.transport.ToolForward;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * A tool call forwarded tool-level: at the home of a 2025 MCP session (or a legacy SSE stream), a call whose
 * {@code session_id} a live other node owns is sent to that node as a 2026-07-28 stateless tools/call over
 * the peer channel. Its progress notifications are relayed to this call's client, each input_required round
 * is answered by asking this client (sampling, roots) and the call retried with the answers, and the final
 * result is this call's result. The client never learns that another node ran it.
 */
public final class PeerCall implements ToolForward {

    private static final String VERSION = "2026-07-28";
    private static final int MAX_HOPS = 3;
    private static final int MAX_ROUNDS = 1000;
    private static final String TARGET = "/mcp";

    private final Router router;
    private final PeerAuth auth;
    private final McpJsonMapper mapper;
    private final ObjectMapper json = new ObjectMapper();
    private final PeerClients peers = new PeerClients();

    public PeerCall(Router router, PeerAuth auth, McpJsonMapper mapper) {
        this.router = router;
        this.auth = auth;
        this.mapper = mapper;
    }

    @Override
    public Optional<McpSchema.CallToolResult> forwarded(
            McpSyncServerExchange exchange, McpSchema.CallToolRequest request) {
        Object named = request.arguments() == null ? null : request.arguments().get("session_id");
        if (!(named instanceof String session)
                || session.isEmpty()
                || !(route(session) instanceof Router.Remote owner)) {
            return Optional.empty();
        }
        try {
            return Optional.ofNullable(call(exchange, request, session, owner));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Where the session routes; here when the cluster database cannot say (the call then runs here only if this
     * node holds the session, which the sessions check themselves, else it is refused as not run here).
     */
    private Router.Route route(String session) {
        try {
            return router.route(session);
        } catch (RlmException e) {
            return new Router.Local();
        }
    }

    /** The owner's result, or null when the owner is gone and this node now owns the session. */
    private McpSchema.CallToolResult call(
            McpSyncServerExchange exchange, McpSchema.CallToolRequest request, String session, Router.Remote first)
            throws IOException {
        ObjectNode params = params(exchange, request);
        Object token = request.meta() == null ? null : request.meta().get("progressToken");
        Router.Remote owner = first;
        for (int round = 0; round < MAX_ROUNDS; round++) {
            Exchange answer = send(owner, request.name(), session, params);
            if (answer.local()) {
                return null;
            }
            owner = answer.owner();
            JsonNode response = read(answer.response(), exchange, token);
            if (response.has("error")) {
                throw new McpError(mapper.convertValue(
                        json.convertValue(response.get("error"), Map.class),
                        McpSchema.JSONRPCResponse.JSONRPCError.class));
            }
            JsonNode result = response.path("result");
            if (!"input_required".equals(result.path("resultType").asText())) {
                ObjectNode complete = result.deepCopy();
                complete.remove("resultType");
                if (complete.get("_meta") instanceof ObjectNode meta) {
                    // the stateless revision's own fields (the owner's identity) are not this client's revision's
                    meta.remove(meta.properties().stream()
                            .map(Map.Entry::getKey)
                            .filter(name -> name.startsWith("io.modelcontextprotocol/"))
                            .toList());
                    if (meta.isEmpty()) {
                        complete.remove("_meta");
                    }
                }
                return mapper.convertValue(json.convertValue(complete, Map.class), McpSchema.CallToolResult.class);
            }
            params.set("inputResponses", InputAnswers.ask(exchange, result.path("inputRequests"), mapper, json));
            params.put("requestState", result.path("requestState").asText());
        }
        throw new McpError(new McpSchema.JSONRPCResponse.JSONRPCError(
                McpSchema.ErrorCodes.INTERNAL_ERROR,
                "the call still asked for input after " + MAX_ROUNDS + " rounds",
                null));
    }

    /** The call's params in the stateless revision: this client's capabilities, and its progress token. */
    private ObjectNode params(McpSyncServerExchange exchange, McpSchema.CallToolRequest request) {
        ObjectNode params = json.createObjectNode().put("name", request.name());
        params.set("arguments", json.valueToTree(request.arguments()));
        ObjectNode meta = params.putObject("_meta").put("io.modelcontextprotocol/protocolVersion", VERSION);
        McpSchema.ClientCapabilities capabilities = exchange.getClientCapabilities();
        meta.set(
                "io.modelcontextprotocol/clientCapabilities",
                capabilities == null
                        ? json.createObjectNode()
                        : json.valueToTree(mapper.convertValue(capabilities, Map.class)));
        if (request.meta() != null && request.meta().get("progressToken") != null) {
            meta.set("progressToken", json.valueToTree(request.meta().get("progressToken")));
        }
        return params;
    }

    /** Where one attempt ended: the owner's response, or the session is this node's now. */
    private record Exchange(HttpResponse<InputStream> response, Router.Remote owner) {
        boolean local() {
            return response == null;
        }
    }

    /** Posts the call to its owner, following 409s; an unreachable owner routes once more. */
    private Exchange send(Router.Remote first, String tool, String session, ObjectNode params) throws IOException {
        ObjectNode message =
                json.createObjectNode().put("jsonrpc", "2.0").put("id", 1).put("method", "tools/call");
        message.set("params", params);
        byte[] body = json.writeValueAsBytes(message);
        String requestId = UUID.randomUUID().toString(); // the same on every node it is sent to
        Router.Remote owner = first;
        for (int hop = 0; hop < MAX_HOPS; hop++) {
            HttpResponse<InputStream> response = null;
            PeerProxy.Answer answer = null;
            Router.Remote asked = owner;
            try {
                response = peers.send(
                        request(owner, tool, session, body, requestId), owner, () -> stillNames(session, asked));
                answer = PeerProxy.Answer.of(response);
            } catch (PeerProxy.Unreachable e) {
                // the owner is down or cut off and cannot have received it: its sessions move when its lease runs out
            } catch (PeerProxy.Unanswered e) {
                throw mayHaveRun(e);
            }
            if (answer != null && answer.redirect() != null) {
                answer.discard();
                owner = answer.redirect();
                continue;
            }
            if (answer != null && !answer.notServing()) {
                return new Exchange(response, owner);
            }
            if (answer != null) {
                answer.discard();
            }
            Router.Route again = Reroute.after(() -> router.route(session), owner, Reroute.PATIENCE);
            if (again instanceof Router.Local) {
                return new Exchange(null, owner);
            }
            if (!(again instanceof Router.Remote other) || other.equals(owner)) {
                throw unreachable(owner);
            }
            owner = other;
        }
        throw new McpError(new McpSchema.JSONRPCResponse.JSONRPCError(
                McpSchema.ErrorCodes.INTERNAL_ERROR,
                "the session moved between nodes " + MAX_HOPS + " times while this call was routed; retry",
                null));
    }

    /** As {@link RouteCache#stillNames}: a node at the owner's address, whatever its id. */
    private boolean stillNames(String session, Router.Remote owner) {
        try {
            return router.peek(session) instanceof Router.Remote now
                    && now.address().equals(owner.address());
        } catch (RuntimeException e) {
            return true; // the cluster database did not answer: the owner's lease is not known to have run out
        }
    }

    private HttpRequest request(Router.Remote owner, String tool, String session, byte[] body, String requestId) {
        return HttpRequest.newBuilder(URI.create("http://" + owner.address() + TARGET))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", VERSION)
                .header("Mcp-Method", "tools/call")
                .header("Mcp-Name", tool)
                .header(RouteKey.SESSION_PARAM_HEADER, headerValue(session))
                .header(PeerAuth.HEADER, auth.sign("POST", TARGET))
                .header(PeerProxy.FORWARDED_BY, auth.nodeId())
                .header(PeerProxy.REQUEST_ID, requestId)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .build();
    }

    /** A header value as is if plain printable ASCII, else as =?base64?...?= (as 2026-07-28 gives). */
    static String headerValue(String value) {
        boolean plain =
                !value.isEmpty() && value.chars().allMatch(c -> c > 0x20 && c < 0x7f) && !value.startsWith("=?");
        return plain
                ? value
                : "=?base64?" + Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8)) + "?=";
    }

    /** The final JSON-RPC response, from a JSON body or an event stream whose progress is relayed on the way. */
    private JsonNode read(HttpResponse<InputStream> response, McpSyncServerExchange exchange, Object token)
            throws IOException {
        if (!response.headers().firstValue("Content-Type").orElse("").startsWith("text/event-stream")) {
            try (InputStream in = response.body()) {
                return json.readTree(in);
            }
        }
        return EventReader.finalResponse(response.body(), json, notification -> {
            if (token != null
                    && "notifications/progress"
                            .equals(notification.path("method").asText())) {
                JsonNode p = notification.path("params");
                exchange.progressNotification(new McpSchema.ProgressNotification(
                        token,
                        p.path("progress").asDouble(),
                        p.hasNonNull("total") ? p.get("total").asDouble() : null,
                        p.hasNonNull("message") ? p.get("message").asText() : null,
                        null));
            }
        });
    }

    /** The owner got the call and did not answer: it is not sent again, and the client must not assume it did not run. */
    private static McpError mayHaveRun(PeerProxy.Unanswered e) {
        return new McpError(new McpSchema.JSONRPCResponse.JSONRPCError(
                -32000, e.getMessage() + "; check the session's state before running it again", null));
    }

    private static McpError unreachable(Router.Remote owner) {
        return new McpError(new McpSchema.JSONRPCResponse.JSONRPCError(
                -32000,
                "the node that owns this session (" + owner.nodeId()
                        + ") is unreachable or not serving; another node takes the "
                        + "session over when that node's lease expires: retry in a few seconds",
                null));
    }
}

package dev.rlmmcp.transport.peer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.cluster.PeerAuth;
import dev.rlmmcp.cluster.Router;
import dev.rlmmcp.transport.stateless.StatelessServer;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * What decides which node serves a request, in this order: its 2025 MCP session ({@code Mcp-Session-Id}, to
 * that session's home), else the REPL session it names ({@code Mcp-Param-Session-Id}, else the body's
 * {@code session_id} argument), else the node a task id or request state names, else nothing: served where it
 * lands. A legacy SSE {@code POST /message} goes to
 * the node of its stream.
 */
public sealed interface RouteKey {

    String MCP_SESSION_HEADER = "Mcp-Session-Id";
    String SESSION_PARAM_HEADER = "Mcp-Param-Session-Id";

    /** A 2025 MCP session, served at its home node. */
    record McpSession(String id) implements RouteKey {}

    /** A REPL session, served by its owner. */
    record Session(String id) implements RouteKey {}

    /** A task id or request state this node handed out names its node (see {@link PeerAuth#tag}). */
    record Node(String nodeId, String address) implements RouteKey {}

    /** Nothing names a session: a new one, or the node's default one, is served where the request lands. */
    record None() implements RouteKey {}

    /** Which node this key routes to now, taking no session over. */
    default Router.Route peek(Router router) {
        return this instanceof Session s ? router.peek(s.id()) : route(router);
    }

    /** Which node this key routes to. */
    default Router.Route route(Router router) {
        return switch (this) {
            case McpSession m -> router.routeMcpSession(m.id());
            case Session s -> router.route(s.id());
            case Node n ->
                n.nodeId().equals(router.nodeId()) ? new Router.Local() : new Router.Remote(n.nodeId(), n.address());
            case None n -> new Router.Local();
        };
    }

    /**
     * The key of a legacy SSE {@code POST /message?session_id=…}: the stream it answers, which lives on the node
     * that opened it (recorded like an MCP session).
     */
    static RouteKey ofStreamQuery(String query) {
        if (query != null) {
            for (String pair : query.split("&")) {
                if (pair.startsWith("session_id=") && pair.length() > "session_id=".length()) {
                    return new McpSession(
                            URLDecoder.decode(pair.substring("session_id=".length()), StandardCharsets.UTF_8));
                }
            }
        }
        return new None();
    }

    /** The key the headers give, or null when only the body can tell. */
    static RouteKey ofHeaders(UnaryOperator<String> headers) {
        String mcpSession = headers.apply(MCP_SESSION_HEADER);
        if (mcpSession != null && !mcpSession.isBlank()) {
            return new McpSession(mcpSession.strip());
        }
        String param = headers.apply(SESSION_PARAM_HEADER);
        String session = param == null ? null : StatelessServer.paramHeaderValue(param);
        return session == null || session.isEmpty() ? null : new Session(session);
    }

    /**
     * The key a JSON-RPC body gives: {@code params.arguments.session_id} of a tools/call on /mcp, or
     * {@code params.session_id} on the plain /rpc. A body that is not JSON is served locally, which refuses it.
     */
    static RouteKey ofBody(
            byte[] body, boolean plainRpc, ObjectMapper json, Function<String, Optional<Router.Remote>> tags) {
        JsonNode message;
        try {
            message = json.readTree(body);
        } catch (IOException e) {
            return new None();
        }
        if (message == null || !message.isObject()) {
            return new None();
        }
        JsonNode params = message.path("params");
        JsonNode session = plainRpc
                ? params.path("session_id")
                : toolArguments(message, params).path("session_id");
        if (session.isTextual() && !session.asText().isEmpty()) {
            return new Session(session.asText());
        }
        for (JsonNode id : List.of(
                params.path("requestState"),
                params.path("taskId"),
                params.path("notifications").path("taskIds").path(0))) {
            Optional<Router.Remote> node = id.isTextual() ? tags.apply(id.asText()) : Optional.empty();
            if (node.isPresent()) {
                return new Node(node.get().nodeId(), node.get().address());
            }
        }
        return new None();
    }

    private static JsonNode toolArguments(JsonNode message, JsonNode params) {
        return "tools/call".equals(message.path("method").asText())
                ? params.path("arguments")
                : com.fasterxml.jackson.databind.node.MissingNode.getInstance();
    }
}

package dev.rlmmcp.e2e.support;

import static dev.rlmmcp.e2e.support.McpDriver.MAPPER;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A client of protocol 2026-07-28 (no initialize, no MCP session: every request carries its version and
 * capabilities, here sampling), over Streamable HTTP or stdio, that answers the input_required rounds of
 * its tool calls itself: each sampling/createMessage request a round asks is answered by a
 * {@link ChatApiSampler}, and the call is sent again with the answers and the round's request state,
 * until it completes.
 */
public final class RevisionClient {

    private static final int MAX_ROUNDS = 500;
    private static final TypeReference<Map<String, Object>> MAP = new TypeReference<>() {};

    /** Sends one request and returns the JSON-RPC response to it. */
    private interface Wire {
        JsonNode send(String method, String name, ObjectNode params) throws IOException, InterruptedException;
    }

    private final Wire wire;
    private final ChatApiSampler sampler;
    private final List<JsonNode> sampled = new CopyOnWriteArrayList<>();
    private final List<Integer> roundSizes = new CopyOnWriteArrayList<>();

    private RevisionClient(Wire wire, ChatApiSampler sampler) {
        this.wire = wire;
        this.sampler = sampler;
    }

    /** A client of the server at {@code mcpUrl}, one HTTP request per JSON-RPC request. */
    public static RevisionClient http(String mcpUrl, ChatApiSampler sampler) {
        return new RevisionClient(new HttpWire(URI.create(mcpUrl)), sampler);
    }

    /**
     * A client on {@code rpc}, made with {@link StdioRpc#stateless} declaring sampling (it adds the _meta
     * itself, and fails the test on a JSON-RPC error).
     */
    public static RevisionClient stdio(StdioRpc rpc, ChatApiSampler sampler) {
        return new RevisionClient(
                (method, name, params) -> {
                    ObjectNode response = MAPPER.createObjectNode();
                    response.set("result", rpc.request(method, MAPPER.convertValue(params, MAP)));
                    return response;
                },
                sampler);
    }

    /**
     * tools/call with the arguments as given plus response_format json, its rounds answered; returns the
     * complete result. A JSON-RPC error, or a round asking anything but sampling, fails the test.
     */
    public JsonNode callTool(String name, Map<String, ?> arguments) throws IOException, InterruptedException {
        ObjectNode params = MAPPER.createObjectNode().put("name", name);
        ObjectNode args = params.putObject("arguments");
        args.setAll((ObjectNode) MAPPER.valueToTree(arguments));
        args.put("response_format", "json");
        for (int round = 0; round < MAX_ROUNDS; round++) {
            JsonNode reply = wire.send("tools/call", name, params);
            if (reply.has("error")) {
                throw new AssertionError("tools/call " + name + " failed: " + reply.get("error"));
            }
            JsonNode result = reply.path("result");
            if (!"input_required".equals(result.path("resultType").asText())) {
                return result;
            }
            ObjectNode answers = MAPPER.createObjectNode();
            var asked = result.path("inputRequests").fields();
            while (asked.hasNext()) {
                var entry = asked.next();
                String method = entry.getValue().path("method").asText();
                if (!"sampling/createMessage".equals(method)) {
                    throw new AssertionError(
                            "a round asked " + method + ", which this client does not answer: " + result);
                }
                JsonNode request = entry.getValue().path("params");
                sampled.add(request);
                answers.set(entry.getKey(), sampler.answer(request));
            }
            roundSizes.add(answers.size());
            params.set("inputResponses", answers);
            params.put("requestState", result.path("requestState").asText());
        }
        throw new AssertionError("tools/call " + name + " still asked for input after " + MAX_ROUNDS + " rounds");
    }

    /** The params of every sampling request answered so far, in the order they were asked. */
    public List<JsonNode> sampled() {
        return List.copyOf(sampled);
    }

    /** How many requests each input_required round asked. */
    public List<Integer> roundSizes() {
        return List.copyOf(roundSizes);
    }

    /** Streamable HTTP of 2026-07-28: method and name in headers too; the answer as JSON or an event stream. */
    private record HttpWire(URI mcpUrl, HttpClient http, AtomicLong ids) implements Wire {

        HttpWire(URI mcpUrl) {
            this(
                    mcpUrl,
                    HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build(),
                    new AtomicLong());
        }

        @Override
        public JsonNode send(String method, String name, ObjectNode params) throws IOException, InterruptedException {
            ObjectNode withMeta = params.deepCopy();
            ObjectNode meta = withMeta.putObject("_meta").put("io.modelcontextprotocol/protocolVersion", "2026-07-28");
            meta.putObject("io.modelcontextprotocol/clientCapabilities").putObject("sampling");
            long id = ids.incrementAndGet();
            ObjectNode message = MAPPER.createObjectNode()
                    .put("jsonrpc", "2.0")
                    .put("id", id)
                    .put("method", method);
            message.set("params", withMeta);
            HttpRequest.Builder request = HttpRequest.newBuilder(mcpUrl)
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .header("MCP-Protocol-Version", "2026-07-28")
                    .header("Mcp-Method", method)
                    .header("Mcp-Name", name)
                    .timeout(Duration.ofMinutes(5))
                    .POST(HttpRequest.BodyPublishers.ofString(MAPPER.writeValueAsString(message)));
            // session_id is declared with x-mcp-header: it travels in Mcp-Param-Session-Id too
            JsonNode session = params.path("arguments").path("session_id");
            if (session.isTextual()) {
                request.header("Mcp-Param-Session-Id", session.asText());
            }
            HttpResponse<String> reply = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
            if (reply.statusCode() != 200) {
                throw new AssertionError(method + " answered HTTP " + reply.statusCode() + ": " + reply.body());
            }
            if (!reply.headers().firstValue("Content-Type").orElse("").startsWith("text/event-stream")) {
                return MAPPER.readTree(reply.body());
            }
            // an event stream: the notifications the call sent on the way, then its answer
            for (String line : reply.body().split("\n")) {
                if (line.startsWith("data:")) {
                    JsonNode event =
                            MAPPER.readTree(line.substring("data:".length()).trim());
                    if (event.path("id").asLong(-1) == id && (event.has("result") || event.has("error"))) {
                        return event;
                    }
                }
            }
            throw new AssertionError(method + " answered an event stream without its response: " + reply.body());
        }
    }
}

package dev.rlmmcp.e2e.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A client of protocol 2025-11-25 over Streamable HTTP: initialize, then every request with the
 * Mcp-Session-Id the server gave; its calls without session_id use that MCP session's default session.
 */
public final class SessionClient {

    private static final String VERSION = "2025-11-25";

    private final URI mcp;
    private final HttpClient http = Rpc.http();
    private final AtomicLong ids = new AtomicLong();
    private String sessionId;

    public SessionClient(String baseUrl) {
        this.mcp = URI.create(baseUrl + "/mcp");
    }

    /** initialize and notifications/initialized; returns the Mcp-Session-Id. */
    public String initialize() throws IOException, InterruptedException {
        ObjectNode params = Rpc.JSON.createObjectNode().put("protocolVersion", VERSION);
        params.putObject("capabilities");
        params.putObject("clientInfo").put("name", "cluster-it").put("version", "1");
        long id = ids.incrementAndGet();
        HttpResponse<String> reply = send(Rpc.request(id, "initialize", params));
        Rpc.result(Rpc.response(reply, id, "initialize"), "initialize");
        sessionId = reply.headers()
                .firstValue("Mcp-Session-Id")
                .orElseThrow(() -> new Rpc.CallFailed("initialize answered no Mcp-Session-Id"));
        ObjectNode initialized =
                Rpc.JSON.createObjectNode().put("jsonrpc", "2.0").put("method", "notifications/initialized");
        HttpResponse<String> ack = send(initialized);
        if (ack.statusCode() != 202 && ack.statusCode() != 200) {
            throw new Rpc.CallFailed("notifications/initialized answered HTTP " + ack.statusCode() + ": " + ack.body());
        }
        return sessionId;
    }

    /** rlm_execute in this MCP session's default session; the reply's stdout. */
    public String print(String code) throws IOException, InterruptedException {
        JsonNode reply = Rpc.content(call("rlm_execute", Map.of("code", code)));
        return reply.has("stdout") ? reply.path("stdout").asText() : reply.toString();
    }

    public JsonNode call(String tool, Map<String, ?> arguments) throws IOException, InterruptedException {
        long id = ids.incrementAndGet();
        HttpResponse<String> reply = send(Rpc.request(id, "tools/call", Rpc.toolCall(tool, arguments)));
        return Rpc.result(Rpc.response(reply, id, tool), tool);
    }

    /** The HTTP reply of a tools/call, its headers included. */
    public HttpResponse<String> reply(String tool, Map<String, ?> arguments) throws IOException, InterruptedException {
        return send(Rpc.request(ids.incrementAndGet(), "tools/call", Rpc.toolCall(tool, arguments)));
    }

    private HttpResponse<String> send(ObjectNode message) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(mcp)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofString(Rpc.JSON.writeValueAsString(message)));
        if (sessionId != null) {
            request.header("Mcp-Session-Id", sessionId).header("MCP-Protocol-Version", VERSION);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}

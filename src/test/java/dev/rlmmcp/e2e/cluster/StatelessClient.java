package dev.rlmmcp.e2e.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A client of protocol 2026-07-28: no initialize and no MCP session; every request carries its version,
 * MCP-Protocol-Version, Mcp-Method and Mcp-Name, and a tool's session_id also as Mcp-Param-Session-Id
 * (the tools declare it with x-mcp-header), which is what a balancer hashes on.
 */
public final class StatelessClient {

    private final URI mcp;
    private final HttpClient http;
    private final AtomicLong ids = new AtomicLong();

    public StatelessClient(String baseUrl) {
        this(baseUrl, Rpc.http());
    }

    public StatelessClient(String baseUrl, HttpClient http) {
        this.mcp = URI.create(baseUrl + "/mcp");
        this.http = http;
    }

    /** A new session (rlm_init_context); its id. */
    public String newSession() throws IOException, InterruptedException {
        return Rpc.content(call("rlm_init_context", Map.of()))
                .path("session_id")
                .asText();
    }

    /** rlm_execute of {@code code} in the session; the reply's content (stdout and more) as JSON. */
    public JsonNode execute(String session, String code) throws IOException, InterruptedException {
        Map<String, Object> args = new LinkedHashMap<>();
        args.put("session_id", session);
        args.put("code", code);
        return Rpc.content(call("rlm_execute", args));
    }

    /** What {@code code} printed in the session. */
    public String print(String session, String code) throws IOException, InterruptedException {
        JsonNode reply = execute(session, code);
        return reply.has("stdout") ? reply.path("stdout").asText() : reply.toString();
    }

    /** tools/call; the result (a JSON-RPC error, a tool error or an HTTP error throws Rpc.CallFailed). */
    public JsonNode call(String tool, Map<String, ?> arguments) throws IOException, InterruptedException {
        long id = ids.incrementAndGet();
        HttpResponse<String> reply =
                http.send(toolCall(id, tool, arguments).build(), HttpResponse.BodyHandlers.ofString());
        return Rpc.result(Rpc.response(reply, id, tool), tool);
    }

    /**
     * The HTTP request of a tools/call with JSON-RPC id {@code id}, as this client sends it and a balancer sees
     * it (its timeout, 60 s, the caller's to change).
     */
    public HttpRequest.Builder toolCall(long id, String tool, Map<String, ?> arguments) throws IOException {
        ObjectNode params = Rpc.toolCall(tool, arguments);
        ObjectNode meta = params.putObject("_meta").put("io.modelcontextprotocol/protocolVersion", "2026-07-28");
        meta.putObject("io.modelcontextprotocol/clientCapabilities");
        HttpRequest.Builder request = HttpRequest.newBuilder(mcp)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2026-07-28")
                .header("Mcp-Method", "tools/call")
                .header("Mcp-Name", tool)
                .timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofString(
                        Rpc.JSON.writeValueAsString(Rpc.request(id, "tools/call", params))));
        Object session = arguments.get("session_id");
        if (session != null) {
            request.header("Mcp-Param-Session-Id", session.toString());
        }
        return request;
    }

    /**
     * What {@code code} (read-only) printed; a call a forwarding node had written to an owner that was cut off comes
     * back 502 "may have run" (never run a second time elsewhere), and a read-only one is then simply sent again.
     */
    public String readAgainIfItMayHaveRun(String session, String code) throws IOException, InterruptedException {
        try {
            return print(session, code);
        } catch (Rpc.CallFailed e) {
            if (!e.getMessage().contains("may have run")) {
                throw e;
            }
            return print(session, code);
        }
    }
}

package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.RunningServer;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The endpoints besides /mcp on the wire: legacy SSE (endpoint event, message events, keep-alive),
 * sampling requests sent to the client during a tool call on /mcp and on /sse, the plain /rpc
 * adapter and /healthz.
 */
class HttpTransportsIT {

    @RegisterExtension
    static final RunningServer server = RunningServer.httpWithFixtures("--sse-keepalive-s", "1");

    private static final HttpClient http = HttpClient.newHttpClient();

    private static HttpResponse<String> send(String method, String path, String body) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create(server.baseUrl() + path))
                        .header("Content-Type", "application/json")
                        .method(
                                method,
                                body == null
                                        ? HttpRequest.BodyPublishers.noBody()
                                        : HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Reads SSE lines up to the next blank line; returns the event as "type|data", or ":comment". */
    private static String nextEvent(BufferedReader sse) throws Exception {
        String type = "message";
        StringBuilder data = new StringBuilder();
        String line;
        while ((line = sse.readLine()) != null) {
            if (line.isEmpty()) {
                if (data.length() > 0) {
                    return type + "|" + data;
                }
                continue;
            }
            if (line.startsWith(":")) {
                return line;
            }
            if (line.startsWith("event: ")) {
                type = line.substring(7);
            } else if (line.startsWith("data: ")) {
                data.append(line.substring(6));
            }
        }
        throw new AssertionError("SSE stream ended");
    }

    private static String nextMessage(BufferedReader sse) throws Exception {
        String event;
        do {
            event = nextEvent(sse);
        } while (event.startsWith(":"));
        return event;
    }

    @Test
    void legacySseSendsTheEndpointAnswersAsMessagesAndKeepsAlive() throws Exception {
        HttpResponse<InputStream> stream = http.send(
                HttpRequest.newBuilder(URI.create(server.baseUrl() + "/sse"))
                        .header("Accept", "text/event-stream")
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertThat(stream.statusCode()).isEqualTo(200);
        assertThat(stream.headers().firstValue("Content-Type").orElse("")).startsWith("text/event-stream");
        try (BufferedReader sse = new BufferedReader(new InputStreamReader(stream.body(), StandardCharsets.UTF_8))) {
            String endpoint = nextEvent(sse);
            assertThat(endpoint).startsWith("endpoint|/message?session_id=");
            String post = endpoint.substring("endpoint|".length());

            HttpResponse<String> accepted = send("POST", post, """
                    {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}""");
            assertThat(accepted.statusCode()).isEqualTo(202);
            JsonNode init = McpDriver.MAPPER.readTree(nextMessage(sse).substring("message|".length()));
            assertThat(init.path("id").asInt()).isEqualTo(1);
            assertThat(init.path("result").path("protocolVersion").asText()).isEqualTo("2024-11-05");
            assertThat(send("POST", post, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}")
                            .statusCode())
                    .isEqualTo(202);

            assertThat(send("POST", post, """
                    {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rlm_execute","arguments":{"code":"print(6 * 7)"}}}""").statusCode()).isEqualTo(202);
            JsonNode call = McpDriver.MAPPER.readTree(nextMessage(sse).substring("message|".length()));
            assertThat(call.path("id").asInt()).isEqualTo(2);
            assertThat(call.path("result").path("content").path(0).path("text").asText())
                    .startsWith("42\n");

            HttpResponse<String> malformed = send("POST", post, "{nope");
            assertThat(malformed.statusCode()).isEqualTo(400);
            assertThat(McpDriver.MAPPER
                            .readTree(malformed.body())
                            .path("error")
                            .path("code")
                            .asInt())
                    .isEqualTo(-32700);

            long before = System.nanoTime();
            assertThat(nextEvent(sse)).isEqualTo(": keep-alive");
            assertThat((System.nanoTime() - before) / 1_000_000).isLessThan(5_000);
        }
        assertThat(send("POST", "/message?session_id=gone", "{}").statusCode()).isEqualTo(404);
    }

    @Test
    void samplingDuringAToolCallWorksOnStreamableHttp() {
        try (McpDriver client = McpDriver.http(server.mcpUrl(), Map.of(), "sampled: {{prompt}}")) {
            JsonNode result = client.call("test_sampling", Map.of("prompt", "ping"));
            assertThat(McpDriver.text(result)).isEqualTo("LLM response: sampled: ping");
        }
    }

    @Test
    void samplingDuringAToolCallWorksOnLegacySse() {
        try (McpDriver client = McpDriver.sse(server.baseUrl() + "/sse", Map.of(), "sampled: {{prompt}}")) {
            JsonNode result = client.call("test_sampling", Map.of("prompt", "pong"));
            assertThat(McpDriver.text(result)).isEqualTo("LLM response: sampled: pong");
        }
    }

    @Test
    void plainRpcCallsTheSameToolsWithoutMcpFraming() throws Exception {
        HttpResponse<String> list = send("POST", "/rpc", "{\"method\":\"tools/list\"}");
        assertThat(list.statusCode()).isEqualTo(200);
        assertThat(McpDriver.MAPPER.readTree(list.body()).path("tools").findValuesAsText("name"))
                .contains("rlm_execute", "rlm_load_data")
                .doesNotContain("test_sampling");

        HttpResponse<String> set =
                send("POST", "/rpc", "{\"method\":\"rlm_execute\",\"params\":{\"code\":\"n = 20\"}}");
        assertThat(set.statusCode()).isEqualTo(200);
        JsonNode get = McpDriver.MAPPER.readTree(
                send("POST", "/rpc", "{\"method\":\"rlm_execute\",\"params\":{\"code\":\"print(n + 22)\"}}")
                        .body());
        assertThat(get.path("status").asText()).isEqualTo("ok");
        assertThat(get.path("stdout").asText()).isEqualTo("42\n");

        HttpResponse<String> refused = send("POST", "/rpc", "{\"method\":\"rlm_execute\",\"params\":{}}");
        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(McpDriver.MAPPER
                        .readTree(refused.body())
                        .path("error")
                        .path("argument")
                        .asText())
                .isEqualTo("code");
        HttpResponse<String> missing = send(
                "POST", "/rpc", "{\"method\":\"rlm_execute\",\"params\":{\"code\":\"1\",\"session_id\":\"nope\"}}");
        assertThat(missing.statusCode()).isEqualTo(404);
        assertThat(send("POST", "/rpc", "{\"method\":\"no_such_tool\"}").statusCode())
                .isEqualTo(404);
        assertThat(send("POST", "/rpc", "{broken").statusCode()).isEqualTo(400);
        assertThat(send("POST", "/rpc", "[1]").statusCode()).isEqualTo(400);
    }

    @Test
    void healthzIsMinimal() throws Exception {
        HttpResponse<String> response = send("GET", "/healthz", null);
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(McpDriver.MAPPER.readTree(response.body())).isEqualTo(McpDriver.MAPPER.readTree("{\"ok\":true}"));
    }
}

package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.RunningServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Streamable HTTP on the wire: statuses, JSON-RPC error codes and session handling, as a raw client sees them. */
class HttpProtocolIT {

    private static final String INIT = """
            {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}""";
    private static final String CALL = """
            {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rlm_execute","arguments":{"code":"6 * 7"}}}""";

    @RegisterExtension
    static final RunningServer server = RunningServer.http("--max-request-mb", "1", "--session-idle-s", "2");

    private static final HttpClient http = HttpClient.newHttpClient();

    private static HttpResponse<String> post(String body, String session) throws Exception {
        return post(body, session, null);
    }

    private static HttpResponse<String> post(String body, String session, String version) throws Exception {
        return post(body, session, version, "application/json, text/event-stream");
    }

    private static HttpResponse<String> post(String body, String session, String version, String accept)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.mcpUrl()))
                .header("Content-Type", "application/json")
                .header("Accept", accept)
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null) {
            request.header("Mcp-Session-Id", session);
        }
        if (version != null) {
            request.header("MCP-Protocol-Version", version);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String initialize() throws Exception {
        HttpResponse<String> response = post(INIT, null);
        assertThat(response.statusCode()).isEqualTo(200);
        String session = response.headers().firstValue("Mcp-Session-Id").orElseThrow();
        assertThat(post("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", session)
                        .statusCode())
                .isEqualTo(202);
        return session;
    }

    private static JsonNode json(HttpResponse<String> response) throws Exception {
        return McpDriver.MAPPER.readTree(response.body());
    }

    @Test
    void aToolCallIsAnsweredWithPlainJson() throws Exception {
        String session = initialize();
        HttpResponse<String> response = post(CALL, session);
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type").orElse("")).startsWith("application/json");
        JsonNode reply = json(response);
        assertThat(reply.path("id").asInt()).isEqualTo(2);
        String text = reply.path("result").path("content").path(0).path("text").asText();
        assertThat(text).startsWith("42\n");
    }

    @Test
    void aSamplingRequestToAJsonOnlyCallFailsAtOnce() throws Exception {
        String init = INIT.replace("\"capabilities\":{}", "\"capabilities\":{\"sampling\":{}}");
        assertThat(init).contains("sampling");
        HttpResponse<String> started = post(init, null);
        String session = started.headers().firstValue("Mcp-Session-Id").orElseThrow();
        post("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", session);
        String call = """
                {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"rlm_execute","arguments":\
                {"code":"try:\\n    llm_query('hi')\\nexcept LLMQueryError as e:\\n    print(e.code, e)"}}}""";
        long before = System.nanoTime();
        HttpResponse<String> response = post(call, session, null, "application/json");
        assertThat((System.nanoTime() - before) / 1_000_000).isLessThan(10_000);
        String text = json(response)
                .path("result")
                .path("content")
                .path(0)
                .path("text")
                .asText();
        assertThat(text).startsWith("BACKEND_ERROR").contains("text/event-stream");
    }

    @Test
    void malformedJsonIsAParseError() throws Exception {
        HttpResponse<String> response = post("{not json", initialize());
        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(json(response).path("error").path("code").asInt()).isEqualTo(-32700);
        assertThat(response.body()).doesNotContain("Exception", "\tat ");
    }

    @Test
    void unknownMethodsAreMethodNotFound() throws Exception {
        HttpResponse<String> response = post("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"no/such\"}", initialize());
        assertThat(json(response).path("error").path("code").asInt()).isEqualTo(-32601);
    }

    @Test
    void aRequestWithoutSessionOrInitializeIsAnsweredInTheDefaultSession() throws Exception {
        HttpResponse<String> first = post("""
                {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"rlm_execute","arguments":{"code":"kept = 41"}}}""", null);
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.headers().firstValue("Content-Type").orElse("")).startsWith("application/json");
        assertThat(first.headers().firstValue("Mcp-Session-Id")).isEmpty();
        HttpResponse<String> second = post("""
                {"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"rlm_execute","arguments":{"code":"print(kept + 1)"}}}""", null);
        String text =
                json(second).path("result").path("content").path(0).path("text").asText();
        assertThat(text).startsWith("42\n");
    }

    @Test
    void sessionsAreKnownAndEndedByDelete() throws Exception {
        assertThat(post(CALL, "no-such-session").statusCode()).isEqualTo(404);
        String session = initialize();
        HttpResponse<String> deleted = http.send(
                HttpRequest.newBuilder(URI.create(server.mcpUrl()))
                        .header("Mcp-Session-Id", session)
                        .DELETE()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(deleted.statusCode()).isEqualTo(200);
        assertThat(post(CALL, session).statusCode()).isEqualTo(404);
    }

    @Test
    void bodiesOverTheLimitAre413() throws Exception {
        String data = "x".repeat(2 * 1024 * 1024);
        String body = """
                {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"rlm_load_data","arguments":{"name":"d","data":"%s"}}}""".formatted(data);
        HttpResponse<String> response = post(body, initialize());
        assertThat(response.statusCode()).isEqualTo(413);
        assertThat(json(response).path("error").path("message").asText()).contains("--max-request-mb");
    }

    @Test
    void getOffersNoStandaloneStream() throws Exception {
        HttpResponse<String> response = http.send(
                HttpRequest.newBuilder(URI.create(server.mcpUrl()))
                        .header("Accept", "text/event-stream")
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(405);
    }

    @Test
    void theProtocolVersionHeaderIsChecked() throws Exception {
        String session = initialize();
        assertThat(post(CALL, session, "2025-06-18").statusCode()).isEqualTo(200);
        assertThat(post(CALL, session, "2025-03-26").statusCode()).isEqualTo(200);
        HttpResponse<String> refused = post(CALL, session, "1999-01-01");
        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(json(refused).path("error").path("message").asText()).contains("1999-01-01", "2025-06-18");
    }

    @Test
    void badParamsAndInternalErrorsAreJsonRpcErrorsWithoutJavaTraces() throws Exception {
        String session = initialize();
        HttpResponse<String> notAnObject =
                post("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":\"x\"}", session);
        assertThat(json(notAnObject).path("error").path("code").asInt()).isEqualTo(-32602);
        HttpResponse<String> noSuchPrompt = post(
                "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"prompts/get\",\"params\":{\"name\":\"none\"}}", session);
        assertThat(json(noSuchPrompt).path("error").path("code").asInt()).isEqualTo(-32602);
        for (HttpResponse<String> r : java.util.List.of(notAnObject, noSuchPrompt)) {
            assertThat(r.body()).doesNotContain("\tat ", "Exception", "io.modelcontextprotocol");
        }
    }

    @Test
    void idleSessionsAreEnded() throws Exception {
        String session = initialize();
        assertThat(post(CALL, session).statusCode()).isEqualTo(200);
        Thread.sleep(4_500);
        assertThat(post(CALL, session).statusCode()).isEqualTo(404);
    }

    @Test
    void wrongMethodsOnARouteAre405() throws Exception {
        for (String[] route : new String[][] {
            {"PUT", "/mcp"},
            {"GET", "/rpc"},
            {"POST", "/healthz"},
            {"POST", "/health"},
            {"DELETE", "/sse"},
            {"GET", "/message"}
        }) {
            HttpResponse<String> response = http.send(
                    HttpRequest.newBuilder(URI.create(server.baseUrl() + route[1]))
                            .method(route[0], HttpRequest.BodyPublishers.noBody())
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(route[0] + " " + route[1]).isEqualTo(405);
        }
    }
}

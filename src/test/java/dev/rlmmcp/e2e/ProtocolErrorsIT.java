package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.RunningServer;
import dev.rlmmcp.e2e.support.ServerProcess;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Malformed and wrongly shaped requests, one table, over every face (stdio, Streamable HTTP /mcp,
 * legacy SSE /message, plain /rpc): each gets its JSON-RPC code and HTTP status, a message that
 * names the field, and no Java internals; and the session they were sent on still works afterwards.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ProtocolErrorsIT {

    /** What no answer may contain: Java's and the SDK's own words, exceptions, stack frames. */
    private static final List<String> INTERNALS = List.of(
            "java.",
            "jackson",
            "com.fasterxml",
            "LinkedHashMap",
            "Exception",
            "\tat ",
            "modelcontextprotocol",
            "McpSchema",
            "StreamReadConstraints",
            "`");

    private static final String INIT = """
            {"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18",\
            "capabilities":{},"clientInfo":{"name":"protocol-errors-it","version":"1"}}}""";
    private static final String INITIALIZED = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
    private static final String DEEP = "[".repeat(100_000) + "]".repeat(100_000);
    private static final String LONG_NUMBER = "1" + "0".repeat(2_000);

    /** How a case is answered. */
    enum Kind {
        /** refused by the face before the SDK: 400 over HTTP, a JSON-RPC error line on stdio */
        REFUSED,
        /** a notification or response refused: 400 over HTTP, no answer at all on stdio (JSON-RPC never answers those) */
        REFUSED_SILENTLY,
        /** a JSON-RPC error answered by the protocol layer to a well-formed request: 200 on /mcp */
        ERROR,
        /** a tool result with isError: argument validation, as the 2025-11-25 specification asks */
        TOOL_ERROR
    }

    /**
     * One row: {@code body} with ID standing for a fresh request id, the JSON-RPC {@code code} (for a
     * TOOL_ERROR the argument the refusal names), and text the message must contain (the field).
     */
    record Case(String name, String body, Kind kind, int code, String names) {

        @Override
        public String toString() {
            return name;
        }

        /** Whether the answer carries the request's id: not when the body could not even be read as JSON. */
        boolean echoesId() {
            return body.contains("ID") && code != -32700;
        }
    }

    private static Case refused(String name, String body, int code, String names) {
        return new Case(name, body, Kind.REFUSED, code, names);
    }

    private static String call(String params) {
        return "{\"jsonrpc\":\"2.0\",\"id\":ID,\"method\":\"tools/call\",\"params\":" + params + "}";
    }

    private static String execute(String arguments) {
        return call("{\"name\":\"rlm_execute\",\"arguments\":" + arguments + "}");
    }

    static Stream<Case> cases() {
        int parse = -32700;
        int request = -32600;
        int params = -32602;
        return Stream.of(
                refused("not JSON", "{not json", parse, "not valid JSON"),
                refused("truncated JSON", "{\"jsonrpc\":\"2.0\",\"id\":", parse, "not valid JSON"),
                refused("a string", "\"hello\"", request, "JSON object"),
                refused("a number", "42", request, "JSON object"),
                refused("null", "null", request, "JSON object"),
                refused("an empty array", "[]", request, "empty"),
                refused("a batch", "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", request, "batch"),
                refused("jsonrpc missing", "{\"id\":ID,\"method\":\"ping\"}", request, "jsonrpc"),
                refused("jsonrpc 1.0", "{\"jsonrpc\":\"1.0\",\"id\":ID,\"method\":\"ping\"}", request, "jsonrpc"),
                refused("jsonrpc a number", "{\"jsonrpc\":2,\"id\":ID,\"method\":\"ping\"}", request, "jsonrpc"),
                refused("method missing", "{\"jsonrpc\":\"2.0\",\"id\":ID}", request, "method"),
                refused("method a number", "{\"jsonrpc\":\"2.0\",\"id\":ID,\"method\":7}", request, "method"),
                refused("method null", "{\"jsonrpc\":\"2.0\",\"id\":ID,\"method\":null}", request, "method"),
                refused("id an object", "{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"ping\"}", request, "id"),
                refused("id an array", "{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}", request, "id"),
                refused("id a boolean", "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", request, "id"),
                refused("id a fraction", "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", request, "id"),
                refused("id null", "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", request, "id"),
                refused(
                        "id beyond 64 bits",
                        "{\"jsonrpc\":\"2.0\",\"id\":" + "9".repeat(40) + ",\"method\":\"ping\"}",
                        request,
                        "id"),
                refused("params a string", call("\"x\""), params, "params"),
                refused("params an array", call("[1]"), params, "params"),
                refused(
                        "tools/call without params",
                        "{\"jsonrpc\":\"2.0\",\"id\":ID,\"method\":\"tools/call\"}",
                        params,
                        "params"),
                refused("params.name missing", call("{\"arguments\":{}}"), params, "params.name"),
                refused("params.name a number", call("{\"name\":5,\"arguments\":{}}"), params, "params.name"),
                refused("params.arguments a string", execute("\"x\""), params, "params.arguments"),
                refused("params.arguments a number", execute("5"), params, "params.arguments"),
                refused("params.arguments an array", execute("[\"x = 1\"]"), params, "params.arguments"),
                refused(
                        "_meta a string",
                        call("{\"name\":\"rlm_execute\",\"arguments\":{\"code\":\"1\"},\"_meta\":\"x\"}"),
                        params,
                        "params._meta"),
                refused(
                        "_meta an array",
                        call("{\"name\":\"rlm_execute\",\"arguments\":{\"code\":\"1\"},\"_meta\":[]}"),
                        params,
                        "params._meta"),
                refused(
                        "progressToken an object",
                        call("{\"name\":\"rlm_execute\",\"arguments\":{\"code\":\"1\"},"
                                + "\"_meta\":{\"progressToken\":{\"a\":1}}}"),
                        params,
                        "params._meta.progressToken"),
                refused(
                        "progressToken a boolean",
                        call("{\"name\":\"rlm_execute\",\"arguments\":{\"code\":\"1\"},"
                                + "\"_meta\":{\"progressToken\":true}}"),
                        params,
                        "params._meta.progressToken"),
                refused(
                        "initialize protocolVersion a number",
                        "{\"jsonrpc\":\"2.0\",\"id\":ID,\"method\":\"initialize\","
                                + "\"params\":{\"protocolVersion\":5,\"capabilities\":{}}}",
                        params,
                        "params.protocolVersion"),
                refused(
                        "tools/list cursor a number",
                        "{\"jsonrpc\":\"2.0\",\"id\":ID,\"method\":\"tools/list\"," + "\"params\":{\"cursor\":5}}",
                        params,
                        "params.cursor"),
                refused(
                        "100k nested arrays",
                        "{\"jsonrpc\":\"2.0\",\"id\":ID,\"method\":\"ping\",\"params\":{\"x\":" + DEEP + "}}",
                        parse,
                        "nested more than 1000 levels"),
                refused("100k nested arrays alone", DEEP, parse, "nested more than 1000 levels"),
                refused(
                        "a 2001-digit number",
                        execute("{\"code\":\"1\",\"timeout_s\":" + LONG_NUMBER + "}"),
                        parse,
                        "number longer than 1000 digits"),
                new Case(
                        "a notification with params a string",
                        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":\"x\"}",
                        Kind.REFUSED_SILENTLY,
                        params,
                        "params"),
                new Case(
                        "a response with error a string",
                        "{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"error\":\"x\"}",
                        Kind.REFUSED_SILENTLY,
                        request,
                        "error"),
                new Case(
                        "unknown method",
                        "{\"jsonrpc\":\"2.0\",\"id\":ID,\"method\":\"no/such\"}",
                        Kind.ERROR,
                        -32601,
                        "no/such"),
                new Case("unknown tool", call("{\"name\":\"nope\",\"arguments\":{}}"), Kind.ERROR, params, "nope"),
                new Case(
                        "prompts/get arguments a string",
                        "{\"jsonrpc\":\"2.0\",\"id\":ID,\"method\":\"prompts/get\","
                                + "\"params\":{\"name\":\"rlm\",\"arguments\":\"x\"}}",
                        Kind.ERROR,
                        params,
                        "params.arguments"),
                toolError("params.arguments null (read as none)", execute("null"), "code"),
                toolError("string argument a number", execute("{\"code\":5}"), "code"),
                toolError("integer argument a string", execute("{\"code\":\"1\",\"timeout_s\":\"x\"}"), "timeout_s"),
                toolError("integer argument a fraction", execute("{\"code\":\"1\",\"timeout_s\":2.5}"), "timeout_s"),
                toolError(
                        "integer argument of 400 digits",
                        execute("{\"code\":\"1\",\"timeout_s\":1" + "0".repeat(400) + "}"),
                        "timeout_s"),
                toolError("integer argument 1e999999", execute("{\"code\":\"1\",\"timeout_s\":1e999999}"), "timeout_s"),
                toolError(
                        "boolean argument a string",
                        call("{\"name\":\"rlm_clear\",\"arguments\":{\"all\":\"yes\"}}"),
                        "all"),
                toolError(
                        "enum argument unknown",
                        execute("{\"code\":\"1\",\"response_format\":\"xml\"}"),
                        "response_format"),
                toolError(
                        "enum argument an object",
                        call("{\"name\":\"rlm_load_data\",\"arguments\":{\"name\":\"d\","
                                + "\"data\":\"x\",\"data_type\":{}}}"),
                        "data_type"),
                toolError("unknown argument", execute("{\"code\":\"1\",\"cod\":\"2\"}"), "cod"));
    }

    private static Case toolError(String name, String body, String argument) {
        return new Case(name, body, Kind.TOOL_ERROR, 0, argument);
    }

    private static final AtomicInteger IDS = new AtomicInteger(100);

    @RegisterExtension
    static final RunningServer server = RunningServer.http();

    private static HttpClient http;
    private static String mcpSession;
    private static Process stdio;
    private static OutputStream stdioIn;
    private static final BlockingQueue<JsonNode> stdioOut = new LinkedBlockingQueue<>();
    private static String sseEndpoint;
    private static final BlockingQueue<JsonNode> sseEvents = new LinkedBlockingQueue<>();

    @BeforeAll
    static void start() throws Exception {
        http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        HttpResponse<String> init = post("/mcp", INIT, null);
        mcpSession = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
        assertThat(post("/mcp", INITIALIZED, mcpSession).statusCode()).isEqualTo(202);

        stdio = new ProcessBuilder(ServerProcess.command(List.of("stdio")))
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        stdioIn = stdio.getOutputStream();
        Thread.ofPlatform().daemon().start(() -> readLines(stdio.getInputStream(), stdioOut, null));
        assertThat(stdioRequest(INIT).path("result").has("protocolVersion")).isTrue();
        stdioWrite(INITIALIZED);

        CompletableFuture<String> endpoint = new CompletableFuture<>();
        HttpResponse<java.io.InputStream> stream = http.send(
                HttpRequest.newBuilder(URI.create(server.baseUrl() + "/sse"))
                        .header("Accept", "text/event-stream")
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        Thread.ofPlatform().daemon().start(() -> readLines(stream.body(), sseEvents, endpoint));
        sseEndpoint = endpoint.get(30, TimeUnit.SECONDS);
        assertThat(post(sseEndpoint, INIT, null).statusCode()).isEqualTo(202);
        assertThat(sseEvents.poll(30, TimeUnit.SECONDS)).isNotNull();
        assertThat(post(sseEndpoint, INITIALIZED, null).statusCode()).isEqualTo(202);

        // a variable each session must still hold after every bad request
        for (Face face : Face.values()) {
            face.send(execute("{\"code\":\"kept = 41\"}").replace("ID", String.valueOf(IDS.incrementAndGet())));
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (stdio != null) {
            stdioIn.close();
            stdio.waitFor(30, TimeUnit.SECONDS);
            stdio.destroyForcibly();
        }
        if (http != null) {
            http.shutdownNow();
        }
    }

    /** Lines of JSON (stdio) or SSE events (data lines of "message" events; the first "endpoint" event completes {@code endpoint}). */
    private static void readLines(
            java.io.InputStream in, BlockingQueue<JsonNode> into, CompletableFuture<String> endpoint) {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String event = null;
            String line;
            while ((line = reader.readLine()) != null) {
                if (endpoint == null) {
                    if (!line.isBlank()) {
                        into.add(McpDriver.MAPPER.readTree(line));
                    }
                } else if (line.startsWith("event:")) {
                    event = line.substring(6).trim();
                } else if (line.startsWith("data:")) {
                    String data = line.substring(5).trim();
                    if ("endpoint".equals(event)) {
                        endpoint.complete(data);
                    } else {
                        into.add(McpDriver.MAPPER.readTree(data));
                    }
                }
            }
        } catch (IOException ignored) {
            // the stream ended
        }
    }

    private static HttpResponse<String> post(String path, String body, String session) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.baseUrl() + path))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null) {
            request.header("Mcp-Session-Id", session);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void stdioWrite(String line) throws IOException {
        stdioIn.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        stdioIn.flush();
    }

    private static JsonNode stdioRequest(String line) throws Exception {
        stdioWrite(line);
        return next(stdioOut, "stdio answer to " + line);
    }

    private static JsonNode next(BlockingQueue<JsonNode> queue, String what) throws InterruptedException {
        JsonNode reply = queue.poll(60, TimeUnit.SECONDS);
        assertThat(reply).as(what).isNotNull();
        return reply;
    }

    /** An answer on a face: the HTTP status (0 on stdio) and the JSON-RPC message (null when there is none). */
    record Answer(int status, String text, JsonNode json) {}

    enum Face {
        STDIO,
        MCP,
        MESSAGE;

        Answer send(String body) throws Exception {
            return send(body, true);
        }

        /** Sends one message; on stdio {@code answered} says whether an answer line is expected at all. */
        Answer send(String body, boolean answered) throws Exception {
            return switch (this) {
                case STDIO -> {
                    stdioWrite(body);
                    if (answered) {
                        JsonNode answer = next(stdioOut, "stdio answer");
                        yield new Answer(0, answer.toString(), answer);
                    }
                    // nothing must come back: a ping's answer comes, and nothing else, not even late
                    String ping = "sync-" + IDS.incrementAndGet();
                    stdioWrite("{\"jsonrpc\":\"2.0\",\"id\":\"" + ping + "\",\"method\":\"ping\"}");
                    JsonNode pong = next(stdioOut, "stdio ping answer");
                    JsonNode late = stdioOut.poll(500, TimeUnit.MILLISECONDS);
                    assertThat(pong.path("id").asText()).as(pong.toString()).isEqualTo(ping);
                    assertThat(late)
                            .as("an answer to a notification or response")
                            .isNull();
                    yield new Answer(0, pong.toString(), null);
                }
                case MCP -> {
                    HttpResponse<String> response = post("/mcp", body, mcpSession);
                    yield new Answer(
                            response.statusCode(),
                            response.body(),
                            response.body().isEmpty() ? null : McpDriver.MAPPER.readTree(response.body()));
                }
                case MESSAGE -> {
                    HttpResponse<String> response = post(sseEndpoint, body, null);
                    if (response.statusCode() != 202) {
                        yield new Answer(
                                response.statusCode(), response.body(), McpDriver.MAPPER.readTree(response.body()));
                    }
                    boolean request = body.contains("\"method\"") && body.contains("\"id\"");
                    JsonNode event = request ? next(sseEvents, "SSE answer") : null;
                    yield new Answer(202, event == null ? "" : event.toString(), event);
                }
            };
        }
    }

    @ParameterizedTest(name = "stdio: {0}")
    @MethodSource("cases")
    @Order(1)
    void stdio(Case c) throws Exception {
        check(Face.STDIO, c);
    }

    @ParameterizedTest(name = "/mcp: {0}")
    @MethodSource("cases")
    @Order(1)
    void streamableHttp(Case c) throws Exception {
        check(Face.MCP, c);
    }

    @ParameterizedTest(name = "/message: {0}")
    @MethodSource("cases")
    @Order(1)
    void legacySse(Case c) throws Exception {
        check(Face.MESSAGE, c);
    }

    private static void check(Face face, Case c) throws Exception {
        String id = String.valueOf(IDS.incrementAndGet());
        Answer answer = face.send(c.body().replace("ID", id), c.kind() != Kind.REFUSED_SILENTLY);
        assertThat(answer.text())
                .as("no Java internals")
                .doesNotContainIgnoringCase(INTERNALS.get(1))
                .doesNotContain(INTERNALS.toArray(String[]::new));
        switch (c.kind()) {
            case REFUSED, REFUSED_SILENTLY -> {
                if (face != Face.STDIO) {
                    assertThat(answer.status()).as("HTTP status").isEqualTo(400);
                } else if (c.kind() == Kind.REFUSED_SILENTLY) {
                    assertThat(answer.json())
                            .as("JSON-RPC answers no notification or response")
                            .isNull();
                    return;
                }
                assertError(answer.json(), c);
                assertThat(
                                answer.json().path("id").isNull()
                                        ? null
                                        : answer.json().path("id").asText())
                        .isEqualTo(c.echoesId() ? id : null);
            }
            case ERROR -> {
                if (face == Face.MCP) {
                    assertThat(answer.status()).isEqualTo(200);
                }
                assertError(answer.json(), c);
                assertThat(answer.json().path("id").asText()).isEqualTo(id);
            }
            case TOOL_ERROR -> {
                assertThat(answer.status()).isIn(0, 200, 202);
                JsonNode result = answer.json().path("result");
                assertThat(answer.json().path("id").asText()).isEqualTo(id);
                assertThat(result.path("isError").asBoolean()).as(answer.text()).isTrue();
                String text = result.path("content").path(0).path("text").asText();
                assertThat(text)
                        .as("ERROR CODE (argument): message")
                        .startsWith("ERROR ")
                        .contains(" (" + c.names() + "): ");
                assertThat(text.substring(text.indexOf("): ") + 3)).contains(c.names());
            }
        }
    }

    private static void assertError(JsonNode answer, Case c) {
        assertThat(answer).isNotNull();
        assertThat(answer.path("jsonrpc").asText()).isEqualTo("2.0");
        assertThat(answer.path("error").path("code").asInt())
                .as(answer.toString())
                .isEqualTo(c.code());
        assertThat(answer.path("error").path("message").asText())
                .as("the message names the field")
                .contains(c.names());
    }

    @Test
    @Order(2)
    void everySessionStillAnswersACorrectCallAfterTheBadOnes() throws Exception {
        for (Face face : Face.values()) {
            String id = String.valueOf(IDS.incrementAndGet());
            Answer answer = face.send(execute("{\"code\":\"print(kept + 1)\"}").replace("ID", id));
            assertThat(answer.json().path("id").asText()).as(face.name()).isEqualTo(id);
            String text = answer.json()
                    .path("result")
                    .path("content")
                    .path(0)
                    .path("text")
                    .asText();
            assertThat(text).as(face.name()).startsWith("42\n");
        }
    }

    /** /rpc speaks no JSON-RPC: its refusals are {error: {code, message}} with an HTTP status, and the same rules hold. */
    static Stream<Object[]> plainRpcCases() {
        return Stream.of(
                new Object[] {"not JSON", "{not json", 400, "PARSE_ERROR", "not valid JSON"},
                new Object[] {"100k nested arrays", DEEP, 400, "PARSE_ERROR", "nested more than 1000 levels"},
                new Object[] {
                    "a 2001-digit number",
                    "{\"method\":\"rlm_execute\",\"params\":{\"timeout_s\":" + LONG_NUMBER + "}}",
                    400,
                    "PARSE_ERROR",
                    "number longer than 1000 digits"
                },
                new Object[] {"empty body", "", 400, "INVALID_ARGUMENT", "JSON object"},
                new Object[] {"an array", "[{\"method\":\"rlm_execute\"}]", 400, "INVALID_ARGUMENT", "JSON object"},
                new Object[] {"a string", "\"x\"", 400, "INVALID_ARGUMENT", "JSON object"},
                new Object[] {"method missing", "{\"params\":{}}", 400, "INVALID_ARGUMENT", "method"},
                new Object[] {"method a number", "{\"method\":5}", 400, "INVALID_ARGUMENT", "method"},
                new Object[] {
                    "params a string",
                    "{\"method\":\"rlm_execute\",\"params\":\"x\"}",
                    400,
                    "INVALID_ARGUMENT",
                    "params"
                },
                new Object[] {
                    "params an array", "{\"method\":\"rlm_execute\",\"params\":[]}", 400, "INVALID_ARGUMENT", "params"
                },
                new Object[] {"unknown method", "{\"method\":\"no_such_tool\"}", 404, "METHOD_NOT_FOUND", "no_such_tool"
                },
                new Object[] {
                    "string argument a number",
                    "{\"method\":\"rlm_execute\",\"params\":{\"code\":5}}",
                    400,
                    "INVALID_ARGUMENT",
                    "code"
                },
                new Object[] {
                    "integer argument a string",
                    "{\"method\":\"rlm_execute\",\"params\":{\"code\":\"1\"," + "\"timeout_s\":\"x\"}}",
                    400,
                    "INVALID_ARGUMENT",
                    "timeout_s"
                },
                new Object[] {
                    "boolean argument a string",
                    "{\"method\":\"rlm_clear\",\"params\":{\"all\":1}}",
                    400,
                    "INVALID_ARGUMENT",
                    "all"
                },
                new Object[] {
                    "enum argument unknown",
                    "{\"method\":\"rlm_execute\",\"params\":{\"code\":\"1\"," + "\"response_format\":\"xml\"}}",
                    400,
                    "INVALID_ARGUMENT",
                    "response_format"
                });
    }

    @ParameterizedTest(name = "/rpc: {0}")
    @MethodSource("plainRpcCases")
    @Order(1)
    void plainRpc(String name, String body, int status, String code, String names) throws Exception {
        HttpResponse<String> response = post("/rpc", body, null);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        assertThat(response.body())
                .doesNotContainIgnoringCase("jackson")
                .doesNotContain(INTERNALS.toArray(String[]::new));
        JsonNode error = McpDriver.MAPPER.readTree(response.body()).path("error");
        assertThat(error.path("code").asText()).isEqualTo(code);
        assertThat(error.path("message").asText()).contains(names);
    }

    @Test
    @Order(2)
    void plainRpcStillAnswersACorrectCall() throws Exception {
        HttpResponse<String> response =
                post("/rpc", "{\"method\":\"rlm_execute\",\"params\":{\"code\":\"6 * 7\"}}", null);
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(McpDriver.MAPPER.readTree(response.body()).path("stdout").asText())
                .isEqualTo("42\n");
    }
}

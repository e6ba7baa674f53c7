package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.ClosedAfterEach;
import dev.rlmmcp.e2e.support.Journey;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.StdioRpc;
import dev.rlmmcp.e2e.support.UserLaunch;
import dev.rlmmcp.e2e.support.UserServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client of protocol 2026-07-28 (no initialize, no MCP session: every request carries its version and
 * capabilities) against {@code bin/rlm-mcp serve} with its defaults: it discovers the server, and its REPL
 * variables live on across its stateless calls, in the default session and in a session of its own.
 */
class StatelessRevisionIT {

    @TempDir
    Path tmp;

    private UserServer server;
    private final HttpClient http =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private int ids;
    private String capabilities = "{}";

    @RegisterExtension
    final ClosedAfterEach open = new ClosedAfterEach();

    /** bin/rlm-mcp serve with its defaults, for a user whose home is under the test's directory. */
    private void startServer() throws Exception {
        Journey.mode(tmp, "rwxr-xr-x");
        Path home = Journey.dirs(tmp, "home");
        server = open.add(UserServer.start(UserLaunch.here(
                tmp,
                Map.of(
                        "HOME",
                        home.toString(),
                        "XDG_DATA_HOME",
                        home.resolve(".local/share").toString()))));
    }

    @Test
    void aStatelessClientDiscoversTheServerAndKeepsItsVariables() throws Exception {
        startServer();

        JsonNode discover = send("server/discover", null, "{}");
        assertThat(discover.path("result").path("supportedVersions").toString()).contains("2026-07-28", "2025-11-25");
        assertThat(discover.path("result").path("capabilities").has("tools")).isTrue();
        assertThat(discover.path("result")
                        .path("_meta")
                        .path("io.modelcontextprotocol/serverInfo")
                        .path("name")
                        .asText())
                .isEqualTo("rlm-mcp");

        JsonNode first = call("rlm_execute", "{\"code\":\"x = 41\"}");
        assertThat(first.path("result").path("resultType").asText()).isEqualTo("complete");
        assertThat(first.path("result").path("isError").asBoolean())
                .as(first.toString())
                .isFalse();
        JsonNode second = call("rlm_execute", "{\"code\":\"print(x + 1)\"}");
        assertThat(second.path("result").path("content").toString())
                .as(second.toString())
                .contains("42");

        JsonNode created = call("rlm_init_context", "{\"response_format\":\"json\"}");
        String session = McpDriver.MAPPER
                .readTree(created.path("result")
                        .path("content")
                        .get(0)
                        .path("text")
                        .asText())
                .path("session_id")
                .asText();
        call("rlm_execute", "{\"session_id\":\"" + session + "\",\"code\":\"y = 'own'\"}");
        JsonNode own =
                call("rlm_execute", "{\"session_id\":\"" + session + "\",\"code\":\"print(y, 'x' in globals())\"}");
        assertThat(own.path("result").path("content").toString())
                .as(own.toString())
                .contains("own False");

        HttpResponse<String> initialize = post("initialize", null, "{\"protocolVersion\":\"2026-07-28\"}");
        assertThat(initialize.statusCode()).isEqualTo(404);
        assertThat(McpDriver.MAPPER
                        .readTree(initialize.body())
                        .path("error")
                        .path("code")
                        .asInt())
                .isEqualTo(-32601);
    }

    @Test
    void llmQueryIsAnsweredByTheClientThroughInputRequiredRoundsOfOneExecution() throws Exception {
        startServer();
        capabilities = "{\"sampling\":{}}";
        String step = "{\"code\":\"a = llm_query('capital of France?')\\nb = llm_query_batched(['one', 'two', 'three'])"
                + "\\nprint(a, b)\"}";

        JsonNode first = call("rlm_execute", step).path("result");
        assertThat(first.path("resultType").asText()).as(first.toString()).isEqualTo("input_required");
        assertThat(first.has("content")).isFalse();
        JsonNode asked = first.path("inputRequests");
        assertThat(asked.size()).isEqualTo(1);
        JsonNode sampling = asked.elements().next();
        assertThat(sampling.path("method").asText()).isEqualTo("sampling/createMessage");
        assertThat(sampling.path("params")
                        .path("messages")
                        .get(0)
                        .path("content")
                        .path("text")
                        .asText())
                .isEqualTo("capital of France?");
        String state = first.path("requestState").asText();

        // an altered state, or one sent with other arguments, is refused, and the execution still waits for its answer
        JsonNode tampered = retry(step, answers(asked), state + "-TAMPERED");
        assertThat(tampered.path("error").path("code").asInt())
                .as(tampered.toString())
                .isEqualTo(-32602);
        JsonNode otherCall = retry("{\"code\":\"print(1)\"}", answers(asked), state);
        assertThat(otherCall.path("error").path("code").asInt())
                .as(otherCall.toString())
                .isEqualTo(-32602);

        // the batch's three prompts come together, in one round
        JsonNode second = retry(step, answers(asked), state).path("result");
        assertThat(second.path("resultType").asText()).as(second.toString()).isEqualTo("input_required");
        assertThat(second.path("inputRequests").size()).isEqualTo(3);
        assertThat(second.path("requestState").asText()).isNotEqualTo(state);
        JsonNode replayed = retry(step, answers(asked), state);
        assertThat(replayed.path("error").path("code").asInt())
                .as(replayed.toString())
                .isEqualTo(-32602);

        JsonNode done = retry(
                        step,
                        answers(second.path("inputRequests")),
                        second.path("requestState").asText())
                .path("result");
        assertThat(done.path("resultType").asText()).as(done.toString()).isEqualTo("complete");
        assertThat(done.path("content").toString())
                .as(done.toString())
                .contains("answer to capital of France? [", "'answer to one', 'answer to two', 'answer to three']");
        JsonNode after = call("rlm_execute", "{\"code\":\"print(len(b), a)\"}").path("result");
        assertThat(after.path("content").toString()).as(after.toString()).contains("3 answer to capital of France?");
    }

    @Test
    void aLongStepRunsAsATaskThatTheClientPollsAndHearsOfAndOneItCancelsStopsItsKernelCode() throws Exception {
        startServer();
        JsonNode listed = send("tools/list", null, "{}").path("result").path("tools");
        for (JsonNode tool : listed) {
            if (tool.path("name").asText().equals("rlm_execute")) {
                assertThat(tool.path("execution").path("taskSupport").asText()).isEqualTo("optional");
            }
        }
        // without the extension, a long step answers when it is done
        JsonNode plain = call("rlm_execute", "{\"code\":\"import time\\ntime.sleep(1)\\nprint('plain')\"}");
        assertThat(plain.path("result").path("resultType").asText())
                .as(plain.toString())
                .isEqualTo("complete");

        capabilities = "{\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}}";
        JsonNode quick = call("rlm_execute", "{\"code\":\"print('quick')\"}").path("result");
        assertThat(quick.path("resultType").asText()).as(quick.toString()).isEqualTo("complete");

        JsonNode created = call("rlm_execute", "{\"code\":\"time.sleep(2)\\nx = 7\\nprint('slow', x)\"}")
                .path("result");
        assertThat(created.path("resultType").asText()).as(created.toString()).isEqualTo("task");
        assertThat(created.path("status").asText()).isEqualTo("working");
        String task = created.path("taskId").asText();
        BlockingQueue<JsonNode> heard = listen(task);
        JsonNode acknowledged = heard.poll(10, TimeUnit.SECONDS);
        assertThat(acknowledged.path("method").asText()).isEqualTo("notifications/subscriptions/acknowledged");
        assertThat(acknowledged
                        .path("params")
                        .path("notifications")
                        .path("taskIds")
                        .toString())
                .contains(task);
        JsonNode done = poll(task);
        assertThat(done.path("status").asText()).as(done.toString()).isEqualTo("completed");
        assertThat(done.path("result").path("content").toString())
                .as(done.toString())
                .contains("slow 7");
        assertThat(call("rlm_execute", "{\"code\":\"print(x * 6)\"}")
                        .path("result")
                        .path("content")
                        .toString())
                .contains("42");
        // the listen stream told the task's status as it changed: working, then completed with the result
        JsonNode working = heard.poll(10, TimeUnit.SECONDS);
        assertThat(working.path("method").asText()).isEqualTo("notifications/tasks");
        assertThat(working.path("params").path("status").asText()).isEqualTo("working");
        JsonNode completed = heard.poll(10, TimeUnit.SECONDS);
        assertThat(completed.path("params").path("status").asText())
                .as(completed.toString())
                .isEqualTo("completed");
        assertThat(completed.path("params").path("result").path("content").toString())
                .contains("slow 7");
        assertThat(completed.path("params").path("_meta").has("io.modelcontextprotocol/subscriptionId"))
                .isTrue();

        String stuck = call("rlm_execute", "{\"code\":\"time.sleep(120)\\ny = 1\"}")
                .path("result")
                .path("taskId")
                .asText();
        JsonNode cancelled =
                send("tasks/cancel", stuck, "{\"taskId\":\"" + stuck + "\"}").path("result");
        assertThat(cancelled.path("resultType").asText()).isEqualTo("complete");
        assertThat(send("tasks/get", stuck, "{\"taskId\":\"" + stuck + "\"}")
                        .path("result")
                        .path("status")
                        .asText())
                .isEqualTo("cancelled");
        // the step was interrupted: the session answers the next call at once, its variables kept
        long started = System.nanoTime();
        JsonNode after =
                call("rlm_execute", "{\"code\":\"print(x, 'y' in globals())\"}").path("result");
        assertThat(after.path("content").toString()).as(after.toString()).contains("7 False");
        assertThat((System.nanoTime() - started) / 1_000_000).isLessThan(10_000);

        capabilities = "{}";
        HttpResponse<String> undeclared = post("tasks/get", task, "{\"taskId\":\"" + task + "\"}");
        assertThat(undeclared.statusCode()).isEqualTo(400);
        assertThat(McpDriver.MAPPER
                        .readTree(undeclared.body())
                        .path("error")
                        .path("code")
                        .asInt())
                .isEqualTo(-32021);

        // a graceful stop ends the open listen stream with its result, and does not wait on it
        long stopping = System.nanoTime();
        server.close();
        assertThat((System.nanoTime() - stopping) / 1_000_000).isLessThan(8_000);
        JsonNode last = null;
        for (JsonNode next = heard.poll(5, TimeUnit.SECONDS); next != null; next = heard.poll(1, TimeUnit.SECONDS)) {
            last = next;
        }
        assertThat(last).isNotNull();
        assertThat(last.path("id").asText()).as(last.toString()).isEqualTo("listen-1");
        assertThat(last.path("result")
                        .path("_meta")
                        .path("io.modelcontextprotocol/subscriptionId")
                        .asText())
                .isEqualTo("listen-1");
    }

    /** A subscriptions/listen stream that follows {@code task}: the messages it carries, as they come. */
    private BlockingQueue<JsonNode> listen(String task) {
        BlockingQueue<JsonNode> heard = new LinkedBlockingQueue<>();
        String meta = "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                + "\"io.modelcontextprotocol/clientCapabilities\":" + capabilities + "}";
        HttpRequest request = HttpRequest.newBuilder(URI.create(server.mcpUrl()))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2026-07-28")
                .header("Mcp-Method", "subscriptions/listen")
                .POST(HttpRequest.BodyPublishers.ofString("{\"jsonrpc\":\"2.0\",\"id\":\"listen-1\",\"method\":"
                        + "\"subscriptions/listen\",\"params\":{\"notifications\":{\"taskIds\":[\"" + task + "\"]},"
                        + meta + "}}"))
                .build();
        http.sendAsync(request, HttpResponse.BodyHandlers.ofLines())
                .thenAccept(response -> response.body()
                        .filter(line -> line.startsWith("data: "))
                        .forEach(line -> {
                            try {
                                heard.add(McpDriver.MAPPER.readTree(line.substring("data: ".length())));
                            } catch (java.io.IOException e) {
                                throw new java.io.UncheckedIOException(e);
                            }
                        }));
        return heard;
    }

    /** tasks/get until the task ends (at most a minute). */
    private JsonNode poll(String task) throws Exception {
        for (int i = 0; i < 300; i++) {
            JsonNode got =
                    send("tasks/get", task, "{\"taskId\":\"" + task + "\"}").path("result");
            assertThat(got.path("resultType").asText()).isEqualTo("complete");
            if (!Set.of("working", "input_required").contains(got.path("status").asText())) {
                return got;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("task " + task + " did not end within a minute");
    }

    @Test
    void overStdioAClientOfTheRevisionDiscoversKeepsVariablesAnswersLlmQueryAndPollsATask() throws Exception {
        Journey.mode(tmp, "rwxr-xr-x");
        Path home = Journey.dirs(tmp, "home");
        List<String> stdio = UserLaunch.here(
                        tmp,
                        Map.of(
                                "HOME",
                                home.toString(),
                                "XDG_DATA_HOME",
                                home.resolve(".local/share").toString()))
                .command(List.of("stdio"));
        try (StdioRpc client = StdioRpc.stateless(
                stdio, Map.of("sampling", Map.of(), "extensions", Map.of("io.modelcontextprotocol/tasks", Map.of())))) {
            JsonNode discover = client.request("server/discover", Map.of());
            assertThat(discover.path("supportedVersions").toString()).contains("2026-07-28", "2025-11-25");
            assertThat(discover.path("capabilities").path("extensions").has("io.modelcontextprotocol/tasks"))
                    .isTrue();

            client.request("tools/call", Map.of("name", "rlm_execute", "arguments", Map.of("code", "z = 6 * 7")));
            Map<String, Object> step = Map.of("code", "a = llm_query('who?')\nprint(a, z)");
            JsonNode asked = client.request("tools/call", Map.of("name", "rlm_execute", "arguments", step));
            assertThat(asked.path("resultType").asText()).as(asked.toString()).isEqualTo("input_required");
            String key = asked.path("inputRequests").fieldNames().next();
            JsonNode answered = client.request(
                    "tools/call",
                    Map.of(
                            "name",
                            "rlm_execute",
                            "arguments",
                            step,
                            "requestState",
                            asked.path("requestState").asText(),
                            "inputResponses",
                            Map.of(
                                    key,
                                    Map.of(
                                            "role",
                                            "assistant",
                                            "content",
                                            Map.of("type", "text", "text", "me"),
                                            "model",
                                            "m"))));
            assertThat(answered.path("resultType").asText()).isEqualTo("complete");
            assertThat(answered.path("content").toString())
                    .as(answered.toString())
                    .contains("me 42");

            JsonNode created = client.request(
                    "tools/call",
                    Map.of(
                            "name",
                            "rlm_execute",
                            "arguments",
                            Map.of("code", "import time\ntime.sleep(1.5)\nprint('late', a)")));
            assertThat(created.path("resultType").asText())
                    .as(created.toString())
                    .isEqualTo("task");
            String task = created.path("taskId").asText();
            JsonNode got = created;
            for (int i = 0; i < 100 && !got.path("status").asText().equals("completed"); i++) {
                Thread.sleep(100);
                got = client.request("tasks/get", Map.of("taskId", task));
            }
            assertThat(got.path("result").path("content").toString())
                    .as(got.toString())
                    .contains("late me");
        }
    }

    /** The client's answers to sampling requests: "answer to " and the prompt. */
    private static String answers(JsonNode asked) {
        StringBuilder answers = new StringBuilder("{");
        asked.fields().forEachRemaining(entry -> {
            String prompt = entry.getValue()
                    .path("params")
                    .path("messages")
                    .get(0)
                    .path("content")
                    .path("text")
                    .asText();
            answers.append(answers.length() > 1 ? "," : "")
                    .append('"')
                    .append(entry.getKey())
                    .append("\":")
                    .append("{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"answer to ")
                    .append(prompt)
                    .append("\"},\"model\":\"test-model\",\"stopReason\":\"endTurn\"}");
        });
        return answers.append('}').toString();
    }

    private JsonNode retry(String arguments, String inputResponses, String requestState) throws Exception {
        return send(
                "tools/call",
                "rlm_execute",
                "{\"name\":\"rlm_execute\",\"arguments\":" + arguments + ",\"inputResponses\":" + inputResponses
                        + ",\"requestState\":\"" + requestState + "\"}");
    }

    private JsonNode call(String tool, String arguments) throws Exception {
        return send("tools/call", tool, "{\"name\":\"" + tool + "\",\"arguments\":" + arguments + "}");
    }

    private JsonNode send(String method, String name, String params) throws Exception {
        HttpResponse<String> reply = post(method, name, params);
        assertThat(reply.statusCode()).as(reply.body()).isEqualTo(200);
        return McpDriver.MAPPER.readTree(reply.body());
    }

    private HttpResponse<String> post(String method, String name, String params) throws Exception {
        String meta = "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                + "\"io.modelcontextprotocol/clientCapabilities\":" + capabilities + "}";
        String withMeta =
                params.equals("{}") ? "{" + meta + "}" : params.substring(0, params.length() - 1) + "," + meta + "}";
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.mcpUrl()))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2026-07-28")
                .header("Mcp-Method", method)
                .POST(HttpRequest.BodyPublishers.ofString("{\"jsonrpc\":\"2.0\",\"id\":" + (++ids) + ",\"method\":\""
                        + method + "\",\"params\":" + withMeta + "}"));
        if (name != null) {
            request.header("Mcp-Name", name);
        }
        // session_id is declared with x-mcp-header: a 2026-07-28 client repeats it in a header
        JsonNode session = McpDriver.MAPPER.readTree(params).path("arguments").path("session_id");
        if (session.isTextual()) {
            request.header("Mcp-Param-Session-Id", session.asText());
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}

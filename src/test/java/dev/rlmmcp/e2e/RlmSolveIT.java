package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.Journey;
import dev.rlmmcp.e2e.support.Kernels;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ScriptedRlm;
import dev.rlmmcp.e2e.support.ServerProcess;
import dev.rlmmcp.e2e.support.StdioRpc;
import dev.rlmmcp.llm.ChatCompletionsServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * rlm_solve end to end: a stdio server (default sandbox) whose RLM loop drives a scripted
 * OpenAI-compatible model on a real socket; the answer, the figures, the trajectory in the trace,
 * progress notifications, a limit that stops the run, and cancellation (notifications/cancelled, and
 * tasks/cancel of protocol 2026-07-28) that stops every child and frees its kernel within a second.
 */
class RlmSolveIT {

    /** Lines of the log, and how many of them are ERROR lines. */
    static final int LINES = 400;

    static final int ERRORS = 37;

    @TempDir
    Path tmp;

    /** A log of {@link #LINES} lines, {@link #ERRORS} of them ERROR lines, in {@code dir}, which kernels may read. */
    static Path log(Path dir) throws Exception {
        Journey.mode(dir, "rwxr-xr-x");
        StringBuilder log = new StringBuilder();
        IntStream.range(0, LINES)
                .forEach(i -> log.append(i % 11 == 3 && i < ERRORS * 11 ? "ERROR" : "INFO")
                        .append(" request ")
                        .append(i)
                        .append(" took ")
                        .append(i % 97)
                        .append(" ms\n"));
        assertThat(log.toString().lines().filter(l -> l.contains("ERROR")).count())
                .isEqualTo(ERRORS);
        Path file = Files.writeString(dir.resolve("server.log"), log);
        Journey.mode(file, "rw-r--r--");
        return file;
    }

    private List<String> server(ChatCompletionsServer api, String... extra) throws Exception {
        Path prices = Files.writeString(
                tmp.resolve("prices.json"),
                "{\"scripted\": {\"input_per_million\": 2.0, \"output_per_million\": 8.0}}");
        List<String> args = new ArrayList<>(List.of(
                "stdio",
                "--data-root",
                tmp.toString(),
                "--llm-base-url",
                api.baseUrl().toString(),
                "--llm-model",
                "scripted",
                "--llm-prices",
                prices.toString()));
        args.addAll(List.of(extra));
        return ServerProcess.command(args);
    }

    @Test
    void aFileUnderTheDataRootIsAnsweredByARootAndFourChildRlmsWithFiguresProgressAndTrajectory() throws Exception {
        log(tmp);
        ScriptedRlm model = new ScriptedRlm(0, 3_000);
        try (ChatCompletionsServer api = new ChatCompletionsServer();
                McpDriver client = McpDriver.stdio(server(api))) {
            api.behaviour = model;
            JsonNode line = client.callRaw(
                    "rlm_solve",
                    Map.of("question", ScriptedRlm.COUNT_ERRORS, "context", Map.of("file", "server.log")),
                    true);
            assertThat(line.path("ok").asBoolean()).as(line.toString()).isTrue();
            assertThat(line.path("result").path("isError").asBoolean())
                    .as(line.toString())
                    .isFalse();
            JsonNode reply = McpDriver.json(line.path("result"));
            assertThat(reply.path("answer").asText()).as(reply.toString()).isEqualTo(String.valueOf(ERRORS));
            assertThat(reply.path("ready").asBoolean()).isTrue();
            assertThat(reply.has("stopped_by")).isFalse();
            JsonNode figures = reply.path("figures");
            assertThat(figures.path("children").asInt()).isEqualTo(4);
            assertThat(figures.path("depth_reached").asInt()).isEqualTo(1);
            assertThat(figures.path("iterations").asInt()).isEqualTo(6);
            assertThat(figures.path("input_tokens").asLong()).isPositive();
            assertThat(figures.path("output_tokens").asLong()).isPositive();
            assertThat(figures.path("cost_usd").asDouble())
                    .isEqualTo(
                            (figures.path("input_tokens").asLong() * 2.0
                                            + figures.path("output_tokens").asLong() * 8.0)
                                    / 1e6,
                            org.assertj.core.data.Offset.offset(1e-9));
            assertThat(figures.path("elapsed_ms").asLong()).isGreaterThanOrEqualTo(3_000);
            assertThat(api.seen())
                    .extracting(s -> s.body().path("model").asText())
                    .containsOnly("scripted");

            String session = reply.path("session_id").asText();
            int entry = reply.path("trace_entry").asInt(-1);
            assertThat(entry).as(reply.toString()).isGreaterThanOrEqualTo(0);
            assertThat(reply.path("trajectory").asText())
                    .isEqualTo("rlm_get_trace(session_id=\"" + session + "\", start=" + entry + ", end=" + (entry + 1)
                            + ")");
            JsonNode trace = McpDriver.json(
                    client.call("rlm_get_trace", Map.of("session_id", session, "start", entry, "end", entry + 1)));
            assertThat(trace.path("steps").path(0).path("kind").asText())
                    .as(trace.toString())
                    .isEqualTo("rlm");

            // the run told the client how it went while it ran: iteration, depth, children, tokens, cost
            List<String> progress = client.events().stream()
                    .filter(e -> "progress".equals(e.path("event").asText()))
                    .map(e -> e.path("message").asText())
                    .toList();
            assertThat(progress)
                    .as(client.events().toString())
                    .anySatisfy(
                            m -> assertThat(m)
                                    .matches(
                                            "(iteration \\d+, )?depth \\d+, \\d+ child(ren)? running, [\\d,]+ tokens, \\$\\d+\\.\\d{4}, \\d+ s"));

            // the same session again: its variables (context among them) are the context; the text reply
            model.rlmTurns.set(0);
            JsonNode again =
                    client.callAsIs("rlm_solve", Map.of("question", ScriptedRlm.COUNT_ERRORS, "session_id", session));
            String text = McpDriver.text(again);
            assertThat(text)
                    .as(text)
                    .startsWith(ERRORS + "\n[6 iterations; 4 children; depth 1; ")
                    .contains("session " + session, "trajectory: rlm_get_trace(");
            assertThat(model.rlmTurns.get()).isEqualTo(6);
        }
    }

    @Test
    void aLimitStopsTheRunWithTheBestAnswerSoFarAndSaysWhichLimit() throws Exception {
        try (ChatCompletionsServer api = new ChatCompletionsServer();
                McpDriver client = McpDriver.stdio(server(api))) {
            api.behaviour = new ScriptedRlm(0, 0);
            JsonNode reply = McpDriver.json(client.call(
                    "rlm_solve",
                    Map.of(
                            "question",
                            ScriptedRlm.NEVER_DONE,
                            "context",
                            Map.of("text", "anything"),
                            "max_iterations",
                            3)));
            assertThat(reply.path("stopped_by").asText()).as(reply.toString()).isEqualTo("max_iterations");
            assertThat(reply.path("stop_message").asText()).contains("max_iterations");
            assertThat(reply.path("answer").asText()).isEqualTo("partial answer 3");
            assertThat(reply.path("ready").asBoolean()).isFalse();
            assertThat(reply.path("figures").path("iterations").asInt()).isEqualTo(3);

            JsonNode budget = McpDriver.json(client.call(
                    "rlm_solve",
                    Map.of(
                            "question",
                            ScriptedRlm.NEVER_DONE,
                            "context",
                            Map.of("text", "anything"),
                            "max_output_tokens",
                            1)));
            assertThat(budget.path("stopped_by").asText()).as(budget.toString()).isEqualTo("max_output_tokens");
            assertThat(budget.path("figures").path("output_tokens").asLong()).isGreaterThan(1);
            assertThat(budget.path("stop_message").asText()).contains("max_output_tokens");
        }
    }

    @Test
    void notificationsCancelledStopsEveryChildAndFreesItsKernelWithinASecond() throws Exception {
        Path runtime = Files.createDirectories(tmp.resolve("kernels-rt"));
        ScriptedRlm model = new ScriptedRlm(0, 0);
        try (ChatCompletionsServer api = new ChatCompletionsServer();
                StdioRpc client =
                        new StdioRpc(server(api, "--runtime-dir", runtime.toString(), "--warm-kernels", "0"))) {
            api.behaviour = model;
            client.callWithoutWaiting(
                    "rlm_solve", Map.of("question", ScriptedRlm.SLEEPY, "context", Map.of("text", "x")));
            long call = client.lastId();
            assertThat(Kernels.await(runtime, n -> n >= 4 && model.childTurns.get() == 3, 60_000))
                    .as("the root and three children running their code")
                    .isNotNegative();
            client.notify("notifications/cancelled", Map.of("requestId", call, "reason", "the user pressed Esc"));
            long freed = Kernels.await(runtime, n -> n <= 1, 5_000);
            System.err.printf("[rlm] children's kernels freed %d ms after notifications/cancelled%n", freed);
            assertThat(freed).as("kernels left: " + Kernels.running(runtime)).isBetween(0L, 1_000L);
            // the server goes on: a new run answers
            JsonNode next = client.call(
                    "rlm_solve",
                    Map.of("question", ScriptedRlm.NEVER_DONE, "context", Map.of("text", "x"), "max_iterations", 1));
            assertThat(next.path("answer").asText()).isEqualTo("partial answer 1");
        }
    }

    @Test
    void forAClientOfTheTasksExtensionALongRunIsATaskThatTasksCancelStops() throws Exception {
        log(tmp);
        Path runtime = Files.createDirectories(tmp.resolve("kernels-rt"));
        ScriptedRlm model = new ScriptedRlm(0, 1_000);
        try (ChatCompletionsServer api = new ChatCompletionsServer();
                StdioRpc client = StdioRpc.stateless(
                        server(api, "--runtime-dir", runtime.toString(), "--warm-kernels", "0"),
                        Map.of("extensions", Map.of("io.modelcontextprotocol/tasks", Map.of())))) {
            api.behaviour = model;
            JsonNode listed = client.request("tools/list", Map.of());
            assertThat(listed.path("tools").findValues("name").stream().map(JsonNode::asText))
                    .contains("rlm_solve");
            for (JsonNode tool : listed.path("tools")) {
                if (tool.path("name").asText().equals("rlm_solve")) {
                    assertThat(tool.path("execution").path("taskSupport").asText())
                            .isEqualTo("optional");
                }
            }
            JsonNode created = client.request(
                    "tools/call",
                    Map.of(
                            "name",
                            "rlm_solve",
                            "arguments",
                            Map.of(
                                    "question",
                                    ScriptedRlm.COUNT_ERRORS,
                                    "context",
                                    Map.of("file", "server.log"),
                                    "response_format",
                                    "json")));
            assertThat(created.path("resultType").asText())
                    .as(created.toString())
                    .isEqualTo("task");
            JsonNode got = created;
            for (int i = 0; i < 600 && !got.path("status").asText().equals("completed"); i++) {
                Thread.sleep(100);
                got = client.request(
                        "tasks/get", Map.of("taskId", created.path("taskId").asText()));
            }
            JsonNode reply = McpDriver.json(got.path("result"));
            assertThat(reply.path("answer").asText()).as(got.toString()).isEqualTo(String.valueOf(ERRORS));

            JsonNode sleepy = client.request(
                    "tools/call",
                    Map.of(
                            "name",
                            "rlm_solve",
                            "arguments",
                            Map.of("question", ScriptedRlm.SLEEPY, "context", Map.of("text", "x"))));
            assertThat(sleepy.path("resultType").asText()).isEqualTo("task");
            assertThat(Kernels.await(runtime, n -> n >= 5 && model.childTurns.get() == 4 + 3, 60_000))
                    .as("the two roots and three children running their code")
                    .isNotNegative();
            client.request(
                    "tasks/cancel", Map.of("taskId", sleepy.path("taskId").asText()));
            long freed = Kernels.await(runtime, n -> n <= 2, 5_000);
            System.err.printf("[rlm] children's kernels freed %d ms after tasks/cancel%n", freed);
            assertThat(freed).as("kernels left: " + Kernels.running(runtime)).isBetween(0L, 1_000L);
            assertThat(client.request(
                                    "tasks/get",
                                    Map.of("taskId", sleepy.path("taskId").asText()))
                            .path("status")
                            .asText())
                    .isEqualTo("cancelled");
        }
    }
}

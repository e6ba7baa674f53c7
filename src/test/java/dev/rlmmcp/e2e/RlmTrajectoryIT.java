package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.e2e.support.BrowserCheck;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import dev.rlmmcp.e2e.support.SessionCalls;
import dev.rlmmcp.llm.ChatCompletionsServer;
import dev.rlmmcp.rlm.Trajectories;
import dev.rlmmcp.store.SessionDatabase;
import dev.rlmmcp.store.SqliteSessionDatabase;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A session whose trace holds a depth-2 RLM run, as users look at it: through rlm_get_trace (the tree
 * in its text, the run exported as alexzhang13/rlm's JSONL, paged) and in the trace viewer in headless
 * Chromium ({@code e2e/rlm-tree-check.mjs}: the tree drawn, nested, collapsible, downloaded; a
 * screenshot under target/ui-screenshots). The run is written to the session's stored trace between
 * two starts of the real server on one --state-dir, as the engine's entry is stored; the second
 * server reads it back from SQLite.
 */
class RlmTrajectoryIT {

    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");

    @TempDir
    Path state;

    @TempDir
    Path profile;

    /** The session, its rlm_solve entry and an exec entry whose code started a child RLM. */
    private record Seeded(String session, int run, int exec) {}

    @Test
    void rlmGetTraceShowsTheTreeAndExportsTheRunAsJsonl() throws Exception {
        Seeded seeded = seed();
        try (ServerProcess server = ServerProcess.http("--state-dir", state.toString());
                McpDriver client = McpDriver.http(server.mcpUrl())) {
            String text = McpDriver.text(
                    client.call("rlm_get_trace", Map.of("session_id", seeded.session(), "response_format", "text")));
            assertThat(text)
                    .contains("entry " + seeded.run() + " rlm run run-7: 7 iterations, 3 children, depth 2")
                    .contains(
                            "\n  RLM depth 0 · root-model · \"Which region sold the most?\" · 2 iterations · answer \"east\" (ready)")
                    .contains("\n      RLM depth 1 · root-model · \"Best region in: north,120 south,80 east,200\"")
                    .contains("\n          RLM depth 2 · root-model · \"Is 200 the largest of 120, 80, 200?\"")
                    .contains(
                            "entry " + seeded.exec() + " (step 1) rlm_query run run-8 (1 call): 2 iterations, 1 child,"
                                    + " depth 1\n  RLM depth 1 · root-model · \"Best region in: west,45\"");

            JsonNode whole = new SessionCalls(client)
                    .ok(
                            "rlm_get_trace",
                            Map.of(
                                    "session_id",
                                    seeded.session(),
                                    "export",
                                    "rlm_jsonl",
                                    "entry",
                                    seeded.run(),
                                    "max_chars",
                                    1_000_000));
            String jsonl = whole.path("jsonl").asText();
            assertThat(whole.path("next_offset").isNull()).isTrue();
            assertThat(jsonl.length()).isEqualTo(whole.path("total_chars").asInt());
            List<JsonNode> lines = new ArrayList<>();
            for (String line : jsonl.split("\n")) {
                lines.add(McpDriver.MAPPER.readTree(line));
            }
            assertThat(lines)
                    .extracting(l -> l.path("type").asText())
                    .containsExactly("metadata", "iteration", "iteration");
            assertThat(lines.get(1)
                            .path("code_blocks")
                            .get(0)
                            .path("result")
                            .path("rlm_calls")
                            .get(0)
                            .path("metadata")
                            .path("iterations")
                            .get(0)
                            .path("code_blocks")
                            .get(0)
                            .path("result")
                            .path("rlm_calls")
                            .get(0)
                            .path("metadata")
                            .path("iterations"))
                    .as("the depth-2 child's own iterations")
                    .hasSize(1);

            StringBuilder paged = new StringBuilder();
            int offset = 0;
            int pages = 0;
            while (true) {
                String page = McpDriver.text(client.call(
                        "rlm_get_trace",
                        Map.of(
                                "session_id",
                                seeded.session(),
                                "export",
                                "rlm_jsonl",
                                "entry",
                                seeded.run(),
                                "offset",
                                offset,
                                "max_chars",
                                4000,
                                "response_format",
                                "text")));
                pages++;
                int footer = page.lastIndexOf("\n[entry " + seeded.run() + " as rlm_jsonl: chars ");
                assertThat(footer).as(page).isPositive();
                paged.append(page, 0, footer);
                String tail = page.substring(footer);
                if (!tail.contains("next: offset=")) {
                    break;
                }
                offset = Integer.parseInt(tail.replaceAll("(?s).*next: offset=(\\d+)].*", "$1"));
            }
            assertThat(pages).isGreaterThan(1);
            assertThat(paged.toString()).isEqualTo(jsonl);

            JsonNode exec = new SessionCalls(client)
                    .ok(
                            "rlm_get_trace",
                            Map.of("session_id", seeded.session(), "export", "rlm_jsonl", "entry", seeded.exec()));
            assertThat(exec.path("jsonl").asText()).contains("\"code\":\"r = rlm_query('Best region in: west,45')\"");

            JsonNode wrong = client.call(
                    "rlm_get_trace", Map.of("session_id", seeded.session(), "export", "rlm_jsonl", "entry", 0));
            assertThat(wrong.path("isError").asBoolean()).isTrue();
            assertThat(McpDriver.text(wrong))
                    .contains("INVALID_ARGUMENT")
                    .contains("entry 0 (load) holds no RLM run")
                    .contains("entries holding a run: [" + seeded.run() + ", " + seeded.exec() + "]");
            JsonNode missing =
                    client.call("rlm_get_trace", Map.of("session_id", seeded.session(), "export", "rlm_jsonl"));
            assertThat(McpDriver.text(missing)).contains("export needs the entry holding the run");
        }
    }

    @Test
    void theTraceViewerDrawsTheTreeOfADepthTwoRun() throws Exception {
        assertThat(CHROMIUM)
                .as("Debian's chromium package (bin/test installs it as root)")
                .isExecutable();
        Path shots = McpDriver.projectRoot().resolve("target/ui-screenshots");
        Files.createDirectories(shots);
        Seeded seeded = seed();
        try (ServerProcess server = ServerProcess.http("--state-dir", state.toString())) {
            BrowserCheck.Outcome browser = BrowserCheck.run(
                    "rlm-tree-check.mjs",
                    List.of(
                            "--base",
                            server.baseUrl(),
                            "--session",
                            seeded.session(),
                            "--entry",
                            String.valueOf(seeded.run()),
                            "--exec-entry",
                            String.valueOf(seeded.exec()),
                            "--shots",
                            shots.toString(),
                            "--profile",
                            profile.resolve("chromium").toString()));
            JsonNode last = browser.last();
            assertThat(last.path("event").asText()).as(browser.output()).isEqualTo("done");
            assertThat(browser.exit()).isZero();
            assertThat(last.path("nodes").asInt()).isEqualTo(4);
            assertThat(last.path("depths").toString()).isEqualTo("[1,2,1]");
            assertThat(last.path("nested_depth_2").asInt()).isEqualTo(1);
            assertThat(last.path("jsonl_lines").asInt()).isEqualTo(3);
            Path shot = shots.resolve("rlm-tree.png");
            assertThat(Files.size(shot)).isGreaterThan(10_000);
            System.out.println("RLM tree screenshot: " + shot);
        }
    }

    @Test
    void anAgentStepsRealChildRunsAreInTheTraceTheToolAndTheViewer() throws Exception {
        assertThat(CHROMIUM)
                .as("Debian's chromium package (bin/test installs it as root)")
                .isExecutable();
        Path shots = McpDriver.projectRoot().resolve("target/ui-screenshots");
        Files.createDirectories(shots);
        try (ChatCompletionsServer api = new ChatCompletionsServer()) {
            api.behaviour = RlmTrajectoryIT::scripted;
            try (ServerProcess server = ServerProcess.http(
                            "--llm-base-url", api.baseUrl().toString(), "--llm-model", "scripted-model");
                    McpDriver client = McpDriver.http(server.mcpUrl())) {
                SessionCalls calls = new SessionCalls(client);
                String id = calls.ok("rlm_init_context", Map.of("name", "notes"))
                        .path("session_id")
                        .asText();
                String out = calls.run(id, "r = rlm_query_batched(['tally', 'tally'], ['x.x', 'xx.x'])\nprint(r)");
                assertThat(out).isEqualTo("['leaf answer', 'leaf answer']\n");
                JsonNode trace = calls.ok("rlm_get_trace", Map.of("session_id", id));
                int entry = trace.path("trace_length").asInt() - 1;
                JsonNode rlm =
                        trace.path("steps").get(trace.path("steps").size() - 1).path("rlm");
                assertThat(rlm.path("calls")).hasSize(2);
                assertThat(rlm.path("calls").get(0).path("child").path("depth").asInt())
                        .isEqualTo(1);

                String text = McpDriver.text(
                        client.call("rlm_get_trace", Map.of("session_id", id, "response_format", "text")));
                assertThat(text)
                        .contains("(step 0) rlm_query run ")
                        .contains("(2 calls): 4 iterations, 2 children, depth 2")
                        .contains(
                                "\n  RLM depth 1 · scripted-model · \"tally\" · 2 iterations · answer \"leaf answer\" (ready)")
                        .contains("\n    iteration 1 · 1 code block · llm_query ×1 · ");
                JsonNode export =
                        calls.ok("rlm_get_trace", Map.of("session_id", id, "export", "rlm_jsonl", "entry", entry));
                List<JsonNode> lines = new ArrayList<>();
                for (String line : export.path("jsonl").asText().split("\n")) {
                    lines.add(McpDriver.MAPPER.readTree(line));
                }
                assertThat(lines).hasSize(2);
                JsonNode children =
                        lines.get(1).path("code_blocks").get(0).path("result").path("rlm_calls");
                assertThat(children).hasSize(2);
                assertThat(children.get(0).path("metadata").path("iterations")).hasSize(2);
                assertThat(children.get(0)
                                .path("metadata")
                                .path("iterations")
                                .get(0)
                                .path("code_blocks")
                                .get(0)
                                .path("result")
                                .path("rlm_calls")
                                .get(0)
                                .path("response")
                                .asText())
                        .isEqualTo("leaf answer");

                BrowserCheck.Outcome browser = BrowserCheck.run(
                        "rlm-tree-check.mjs",
                        List.of(
                                "--real",
                                "--base",
                                server.baseUrl(),
                                "--session",
                                id,
                                "--entry",
                                String.valueOf(entry),
                                "--shots",
                                shots.toString(),
                                "--profile",
                                profile.resolve("chromium-real").toString()));
                JsonNode last = browser.last();
                assertThat(last.path("event").asText()).as(browser.output()).isEqualTo("done");
                assertThat(browser.exit()).isZero();
                assertThat(last.path("nodes").asInt()).isEqualTo(2);
                assertThat(last.path("leaf_calls").asInt()).isEqualTo(2);
                assertThat(last.path("jsonl_lines").asInt()).isEqualTo(2);
                System.out.println("RLM tree of a real run: " + shots.resolve("rlm-real.png"));
            }
        }
    }

    /**
     * The model, as the loop talks to it: an RLM given "tally" asks a child for its context (past the
     * depth limit, a plain call) and answers with what it got; a plain call answers "leaf answer".
     */
    private static ChatCompletionsServer.Reply scripted(JsonNode request) {
        JsonNode messages = request.path("messages");
        boolean rlm = messages.path(0).path("content").asText().contains("You are a Recursive Language Model");
        String content;
        if (!rlm) {
            content = "leaf answer";
        } else {
            int turns = 0;
            for (JsonNode m : messages) {
                turns += "assistant".equals(m.path("role").asText()) ? 1 : 0;
            }
            content = turns == 0
                    ? "Ask a child.\n```repl\nsub = rlm_query('leaf', context)\nprint(sub)\n```"
                    : "```repl\nanswer['content'] = sub\nanswer['ready'] = True\n```";
        }
        ObjectNode body = McpDriver.MAPPER.createObjectNode().put("model", "scripted-model");
        body.putArray("choices")
                .addObject()
                .putObject("message")
                .put("role", "assistant")
                .put("content", content);
        body.putObject("usage").put("prompt_tokens", 40).put("completion_tokens", 12);
        return new ChatCompletionsServer.Reply(200, body.toString(), 0);
    }

    /**
     * A session made through MCP (a load and a step), then, with the server stopped, an rlm_solve entry
     * holding the depth-2 run and an exec entry whose code started a child, appended to its stored trace
     * as the server stores entries.
     */
    private Seeded seed() throws Exception {
        String id;
        int length;
        try (ServerProcess server = ServerProcess.http("--state-dir", state.toString());
                McpDriver client = McpDriver.http(server.mcpUrl())) {
            SessionCalls calls = new SessionCalls(client);
            id = calls.ok(
                            "rlm_init_context",
                            Map.of(
                                    "name",
                                    "sales",
                                    "data_type",
                                    "text",
                                    "context_text",
                                    "north,120 south,80 east,200 west,45"))
                    .path("session_id")
                    .asText();
            calls.run(id, "rows = sales.split()\nprint(len(rows))");
            length = calls.ok("rlm_get_trace", Map.of("session_id", id))
                    .path("trace_length")
                    .asInt();
            server.terminate();
        }
        JsonNode tree = Trajectories.depthTwoTree();
        try (SessionDatabase db = SqliteSessionDatabase.open(state.resolve("sessions.db"))) {
            ObjectNode record = null;
            for (SessionDatabase.StoredRecord r : db.records()) {
                if (r.id().equals(id)) {
                    record = (ObjectNode) McpDriver.MAPPER.readTree(r.record());
                }
            }
            assertThat(record).as("the session's stored record").isNotNull();
            ObjectNode run = entry(length, null, "rlm", Trajectories.QUESTION, "done", Trajectories.ANSWER, 4100);
            run.set("rlm", tree);
            db.append(
                    id,
                    record.put("trace_length", length + 1).toString(),
                    length,
                    run.toString(),
                    SessionDatabase.TRACE_KEPT);
            ObjectNode exec =
                    entry(length + 1, 1, "exec", "r = rlm_query('Best region in: west,45')", "ok", "west (45)\n", 1400);
            exec.withArray("variables_changed").add("r");
            exec.set("rlm", Trajectories.stepTree());
            db.append(
                    id,
                    record.put("trace_length", length + 2).toString(),
                    length + 1,
                    exec.toString(),
                    SessionDatabase.TRACE_KEPT);
        }
        return new Seeded(id, length, length + 1);
    }

    private static ObjectNode entry(
            int index, Integer step, String kind, String input, String status, String output, double ms) {
        ObjectNode entry = McpDriver.MAPPER.createObjectNode().put("index", index);
        if (step != null) {
            entry.put("step", step);
        }
        entry.put("kind", kind)
                .put("at", "2026-11-27T12:00:05Z")
                .put("input", input)
                .put("status", status)
                .put("output", output);
        entry.putArray("variables_changed");
        return entry.put("duration_ms", ms).put("io_bytes", 0).put("memory_bytes", 0);
    }
}

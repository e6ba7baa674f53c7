package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.e2e.support.ClosedAfterEach;
import dev.rlmmcp.e2e.support.CodexCli;
import dev.rlmmcp.e2e.support.Journey;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ResponsesEndpoint;
import dev.rlmmcp.e2e.support.ResponsesEndpoint.Exec;
import dev.rlmmcp.e2e.support.ResponsesEndpoint.Say;
import dev.rlmmcp.e2e.support.SubCallsTask;
import dev.rlmmcp.e2e.support.SubCallsTask.Pending;
import dev.rlmmcp.e2e.support.UserLaunch;
import dev.rlmmcp.e2e.support.UserServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent as the model, with the real Codex CLI ({@code @openai/codex} of {@code e2e/}) registered as the
 * README says, over stdio and HTTP, with no API for {@code llm_query} anywhere: the scripted model
 * ({@link ResponsesEndpoint}, Codex's code mode: each turn one {@code exec} script calling
 * {@code tools.mcp__rlm__*} and printing the whole result) loads a log several directories deep and runs
 * {@link SubCallsTask#STEP}. The step suspends with 8 {@code llm} requests; the model reads every prompt
 * whole with {@code rlm_pending}, and at its next turn answers them all, each from the prompt it read, with
 * one {@code rlm_answer}. The step goes on and suspends again at {@code rlm_query} with one {@code rlm}
 * request and its child session; the model runs a step in that session on its {@code context} and answers
 * with the variable; the step ends and its last line must be right, and {@code rlm_sessions} no longer lists
 * the child session. Over stdio, every process Codex started (the server, its kernels) is gone once Codex
 * has ended.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class AgentSubCallsCodexIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration RUN_TIMEOUT = Duration.ofMinutes(3);
    private static final Pattern SESSION = Pattern.compile("session (s-[0-9a-f]+)");

    @TempDir
    Path tmp;

    @RegisterExtension
    final ClosedAfterEach open = new ClosedAfterEach();

    private final Set<ProcessHandle> started = new LinkedHashSet<>();
    private Path dataRoot;
    private SubCallsTask task;

    @BeforeEach
    void setUp() throws IOException {
        open.add(() -> started.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly));
        dataRoot = Journey.dirs(tmp, "data");
        task = SubCallsTask.write(dataRoot.resolve(SubCallsTask.PATH));
    }

    @Test
    void stdio(TestInfo test) throws Exception {
        String registration = CodexIT.readmeSnippet(0)
                .replace("/path/to/rlm-mcp", McpDriver.projectRoot().toString())
                .replace("/path/to/your/data", dataRoot.toString());
        run(test, registration, true);
    }

    @Test
    void http(TestInfo test) throws Exception {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("HOME", Journey.dirs(tmp, "server-home").toString());
        env.put("XDG_DATA_HOME", null);
        for (String name : List.of("RLM_LLM_BASE_URL", "RLM_LLM_API_KEY", "RLM_LLM_MODEL", "RLM_LLM_BACKEND")) {
            env.put(name, null);
        }
        UserServer server = open.add(UserServer.start(UserLaunch.here(tmp, env), "--data-root", dataRoot.toString()));
        String registration = CodexIT.readmeSnippet(1).replace("http://127.0.0.1:8765/mcp", server.mcpUrl());
        run(test, registration, false);
    }

    private void run(TestInfo test, String registration, boolean stdio) throws Exception {
        ResponsesEndpoint model = open.add(ResponsesEndpoint.start());
        CodexCli codex =
                new CodexCli(tmp.resolve("home"), tmp.resolve("work"), CodexCli.providerConfig(model) + registration);
        try {
            script(model);
            CodexCli.Run run = codex.exec(
                    "Count the ERROR lines of " + SubCallsTask.PATH + " chunk by chunk with llm_query_batched, "
                            + "and the distinct hosts with rlm_query, in the rlm REPL.",
                    RUN_TIMEOUT);
            started.addAll(run.started());
            System.out.println(test.getDisplayName() + ": codex exec exit " + run.exit() + " after "
                    + run.took().toMillis() + " ms");
            assertThat(run.exit()).as("codex exec\n%s", run).isZero();
            SoftAssertions softly = new SoftAssertions();
            softly.assertThat(model.failures()).as("the scripted model's turns").isEmpty();
            softly.assertThat(model.turnsLeft())
                    .as("scripted turns Codex never asked for")
                    .isZero();
            if (stdio) {
                softly.assertThat(aliveAfter(run))
                        .as("processes Codex started, alive after it ended")
                        .isEmpty();
            }
            check(softly, model, run);
            softly.assertAll();
        } catch (AssertionError | RuntimeException e) {
            Path dump = model.dump(McpDriver.projectRoot()
                    .resolve("target/codex-e2e")
                    .resolve("AgentSubCalls-"
                            + test.getTestMethod().orElseThrow().getName() + "-requests.jsonl"));
            throw new AssertionError(
                    e.getMessage() + "\n\nthe scripted model's failures: " + model.failures()
                            + "\nthe conversation at the last request:\n" + model.transcript()
                            + "every request Codex sent: " + dump,
                    e);
        }
    }

    // --- the scripted model ---

    private void script(ResponsesEndpoint model) {
        model.then(call("rlm_load_file", Map.of("path", SubCallsTask.PATH, "name", "log", "data_type", "lines")))
                .then(request -> call("rlm_execute", Map.of("session_id", session(request), "code", SubCallsTask.STEP)))
                // every prompt, whole, in one script
                .then(request ->
                        new Exec("// @exec: {\"max_output_tokens\": 30000}\nconst read = {};\nfor (const id of "
                                + json(llmIds(request)) + ") {\n"
                                + "  read[id] = await tools.mcp__rlm__rlm_pending({session_id: "
                                + json(session(request))
                                + ", id});\n}\ntext(JSON.stringify(read));"))
                // each answered from the prompt read
                .then(request -> {
                    JsonNode read = tree(printed(request, 2));
                    List<Map<String, String>> answers = new ArrayList<>();
                    for (String id : llmIds(request)) {
                        int n = SubCallsTask.errorLines(read.path(id)
                                .path("content")
                                .path(0)
                                .path("text")
                                .asText());
                        answers.add(Map.of("id", id, "text", Integer.toString(n)));
                    }
                    return call("rlm_answer", Map.of("session_id", session(request), "answers", answers));
                })
                .then(request -> call(
                        "rlm_execute",
                        Map.of("session_id", rlmPending(request).childSession(), "code", SubCallsTask.CHILD_CODE)))
                .then(request -> call(
                        "rlm_answer",
                        Map.of(
                                "session_id",
                                session(request),
                                "answers",
                                List.of(Map.of("id", rlmPending(request).id(), "var", "result")))))
                // the child session is gone with the step that made it
                .then(call("rlm_sessions", Map.of()))
                .then(request -> new Say("Done: " + resultLine(text(request, 5))));
    }

    /** The turn that calls one rlm tool from {@code exec} and prints its whole result. */
    private static Exec call(String tool, Map<String, ?> args) {
        return new Exec("text(await tools.mcp__rlm__" + tool + "(" + json(args) + "));");
    }

    private static String json(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** What the n-th exec script printed, as Codex sent it back (its first text item is Codex's header). */
    private static String printed(JsonNode request, int n) {
        List<JsonNode> outputs = new ArrayList<>();
        for (JsonNode item : request.path("input")) {
            if ("custom_tool_call_output".equals(item.path("type").asText())) {
                outputs.add(item.path("output"));
            }
        }
        if (n >= outputs.size()) {
            throw new AssertionError("no output of exec call " + n + " in the conversation");
        }
        JsonNode output = outputs.get(n);
        if (!output.isArray()) {
            return output.asText();
        }
        StringBuilder printed = new StringBuilder();
        for (int i = 1; i < output.size(); i++) {
            printed.append(output.get(i).path("text").asText());
        }
        return printed.toString();
    }

    /** The reply's text in the CallToolResult the n-th exec script printed. */
    private static String text(JsonNode request, int n) {
        return result(request, n).path("content").path(0).path("text").asText();
    }

    private static JsonNode result(JsonNode request, int n) {
        return tree(printed(request, n));
    }

    private static JsonNode tree(String printed) {
        try {
            return JSON.readTree(printed);
        } catch (IOException e) {
            throw new AssertionError("not JSON: " + printed, e);
        }
    }

    /** The session the load's reply named (the connection's default session). */
    private static String session(JsonNode request) {
        Matcher m = SESSION.matcher(text(request, 0));
        if (!m.find()) {
            throw new AssertionError("no session id in the load's reply: " + text(request, 0));
        }
        return m.group(1);
    }

    private static List<String> llmIds(JsonNode request) {
        List<Pending> pending =
                List.copyOf(SubCallsTask.pending(text(request, 1)).values());
        if (pending.size() != SubCallsTask.CHUNKS
                || pending.stream().anyMatch(p -> !p.kind().equals("llm"))) {
            throw new AssertionError("not 8 llm requests pending in:\n" + text(request, 1));
        }
        return pending.stream().map(Pending::id).toList();
    }

    private static Pending rlmPending(JsonNode request) {
        List<Pending> pending =
                List.copyOf(SubCallsTask.pending(text(request, 3)).values());
        if (pending.size() != 1
                || !pending.getFirst().kind().equals("rlm")
                || pending.getFirst().childSession() == null) {
            throw new AssertionError("not one rlm request with a child session pending in:\n" + text(request, 3));
        }
        return pending.getFirst();
    }

    private static String resultLine(String reply) {
        return reply.lines()
                .filter(l -> l.startsWith("RESULT "))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no RESULT line in:\n" + reply));
    }

    // --- what reached the model ---

    private void check(SoftAssertions softly, ResponsesEndpoint model, CodexCli.Run run) {
        List<JsonNode> turns = model.turns();
        softly.assertThat(turns).as("model requests").hasSize(8);
        if (turns.size() != 8) {
            return;
        }
        JsonNode last = turns.getLast();
        for (int n = 0; n < 7; n++) {
            if (n != 2) {
                softly.assertThat(result(last, n).path("isError").asBoolean())
                        .as("isError of exec %d: %s", n, printed(last, n))
                        .isFalse();
            }
        }
        String suspended = text(last, 1);
        softly.assertThat(suspended).as("the step's first reply").containsIgnoringCase("suspended");
        String session = session(last);
        softly.assertThat(SubCallsTask.answerSession(suspended))
                .as("the session to answer in")
                .isEqualTo(session);
        JsonNode read = tree(printed(last, 2));
        List<Integer> chunks = new ArrayList<>();
        for (String id : llmIds(last)) {
            JsonNode r = read.path(id);
            softly.assertThat(r.path("isError").asBoolean())
                    .as("rlm_pending %s: %s", id, r)
                    .isFalse();
            chunks.add(task.chunkOf(r.path("content").path(0).path("text").asText()));
        }
        softly.assertThat(chunks)
                .as("the chunk each prompt read through rlm_pending holds whole")
                .containsExactlyInAnyOrder(0, 1, 2, 3, 4, 5, 6, 7);
        Pending rlm = rlmPending(last);
        softly.assertThat(rlm.childSession()).as("the child session").isNotEqualTo(session);
        softly.assertThat(text(last, 4))
                .as("the child session's context and the count computed from it")
                .startsWith("list " + task.lines().size() + " " + task.hosts());
        String end = text(last, 5);
        softly.assertThat(end).as("the end of the step").contains(task.resultLine());
        softly.assertThat(SubCallsTask.pending(end))
                .as("nothing pending at the end")
                .isEmpty();
        softly.assertThat(text(last, 6))
                .as("rlm_sessions once the step has ended")
                .contains(session)
                .doesNotContain(rlm.childSession());
        softly.assertThat(agentMessage(run)).as("Codex's last message").isEqualTo("Done: " + task.resultLine());
        for (int n : List.of(1, 2, 3, 4, 5)) {
            System.out.printf("exec %d printed %d B%n", n, printed(last, n).getBytes(StandardCharsets.UTF_8).length);
        }
    }

    /** The text of Codex's last {@code agent_message} item, as {@code codex exec --json} reports it. */
    private static String agentMessage(CodexCli.Run run) {
        String message = "";
        for (String line : run.stdout().lines().toList()) {
            try {
                JsonNode event = JSON.readTree(line);
                JsonNode item = event.path("item");
                if ("item.completed".equals(event.path("type").asText())
                        && "agent_message".equals(item.path("type").asText())) {
                    message = item.path("text").asText();
                }
            } catch (IOException notJson) {
                // only events are JSON
            }
        }
        return message;
    }

    private static List<String> aliveAfter(CodexCli.Run run) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (run.started().stream().anyMatch(ProcessHandle::isAlive) && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        return run.started().stream()
                .filter(ProcessHandle::isAlive)
                .map(p -> p.pid() + " " + p.info().commandLine().orElse("?"))
                .toList();
    }
}

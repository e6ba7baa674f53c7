package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.AnthropicEndpoint;
import dev.rlmmcp.e2e.support.AnthropicEndpoint.Block;
import dev.rlmmcp.e2e.support.AnthropicEndpoint.Request;
import dev.rlmmcp.e2e.support.AnthropicEndpoint.Step;
import dev.rlmmcp.e2e.support.ClaudeCode;
import dev.rlmmcp.e2e.support.Journey;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.SubCallsTask;
import dev.rlmmcp.e2e.support.SubCallsTask.Pending;
import dev.rlmmcp.e2e.support.UserLaunch;
import dev.rlmmcp.e2e.support.UserServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent as the model, with the real Claude Code (pinned in {@code e2e/package-lock.json}) over stdio and
 * HTTP, and no API for {@code llm_query} anywhere (no {@code RLM_LLM_*} reaches the server; Claude Code does
 * not declare sampling): the server's default backend makes a step that calls the sub-LLM suspend and hand
 * its requests to the agent. The scripted model ({@link AnthropicEndpoint}) loads a log several directories
 * deep and runs {@link SubCallsTask#STEP}: {@code llm_query_batched} over 8 chunks, then {@code rlm_query}.
 * The step suspends with 8 {@code llm} requests; the model reads 6 prompts whole ({@code rlm_pending} with
 * an id) and answers them in one {@code rlm_answer}, each from what its prompt says, then hands the last two
 * to two sub-agents at once (two calls of Claude Code's {@code Agent} tool in one message), whose own turns
 * read their prompt and answer it, side by side: the one that answers last gets the rest of the step. The
 * step has gone on and waits at {@code rlm_query}, with one {@code rlm} request and its child session, which
 * the model finds with {@code rlm_pending}; it runs a step in that session on its {@code context} and answers
 * with the variable. The step then ends, and what it prints must be right.
 *
 * <p>Checked from what reached the model (the endpoint's recorded requests; {@code rlm_sessions} at the end
 * no longer lists the child session), Claude Code's result (exit 0, no permission denial, both sub-agents
 * started and completed) and, over stdio, the processes: the server and its kernels are gone once Claude Code
 * has exited. On failure the requests and Claude Code's debug log are in {@code target/claude-code-e2e/}.
 */
class AgentSubCallsClaudeCodeIT {

    private static final Duration RUN_TIMEOUT = Duration.ofMinutes(3);
    private static final String RLM = "mcp__rlm__";
    /** Requests handed to sub-agents, which answer them side by side. */
    static final int SUBAGENTS = 2;

    private static final Pattern SESSION_ID = Pattern.compile("\\bs-[0-9a-f]{12,}\\b");

    @TempDir
    Path tmp;

    private Path home;
    private Path project;
    private Path data;
    private SubCallsTask task;
    private AnthropicEndpoint model;
    private ClaudeCode claude;
    private UserServer server;
    private final List<String> report = new ArrayList<>();
    private String testName;

    @BeforeEach
    void setUp(TestInfo info) throws IOException {
        testName = info.getTestMethod().orElseThrow().getName();
        Journey.mode(tmp, "rwxr-xr-x");
        home = Journey.dirs(tmp, "home");
        Journey.mode(home, "rwx------");
        project = Journey.dirs(tmp, "project");
        data = Journey.dirs(tmp, "data");
        task = SubCallsTask.write(data.resolve(SubCallsTask.PATH));
        model = new AnthropicEndpoint();
        claude = new ClaudeCode(home, project, model.baseUrl());
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            if (server != null) {
                server.close();
            }
            model.close();
        } finally {
            List<ProcessHandle> left = awaitGone(tmp, Duration.ofSeconds(20));
            left.forEach(ProcessHandle::destroyForcibly);
            System.out.println(String.join("\n", report));
            assertThat(left)
                    .as("processes still running that mention %s after the test", tmp)
                    .isEmpty();
        }
    }

    @Test
    void stdio() throws Exception {
        Path launcher = McpDriver.projectRoot().resolve("bin/rlm-mcp");
        ClaudeCode.Result add =
                claude.mcpAdd("rlm", "--", launcher.toString(), "stdio", "--data-root", data.toString());
        assertThat(add.exit()).as("claude mcp add (stdio)\n%s", add).isZero();
        run(true);
    }

    @Test
    void http() throws Exception {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("HOME", home.toString());
        env.put("XDG_DATA_HOME", home.resolve(".local/share").toString());
        for (String name : List.of("RLM_LLM_BASE_URL", "RLM_LLM_API_KEY", "RLM_LLM_MODEL", "RLM_LLM_BACKEND")) {
            env.put(name, null);
        }
        server = UserServer.start(UserLaunch.here(data, env));
        ClaudeCode.Result add = claude.mcpAdd("--transport", "http", "rlm", server.mcpUrl());
        assertThat(add.exit()).as("claude mcp add (http)\n%s", add).isZero();
        run(false);
    }

    private void run(boolean stdio) throws Exception {
        List<ClaudeCode.Result> runs = new ArrayList<>();
        try {
            model.script("task", taskScript());
            model.subagentScript("sub", subagentScript());
            ClaudeCode.Result result = claude.run(
                    List.of(
                            "-p",
                            "Count the ERROR lines of " + SubCallsTask.PATH + " chunk by chunk with llm_query_batched, "
                                    + "and the distinct hosts with rlm_query, in the rlm REPL.",
                            "--output-format",
                            "json",
                            "--debug-file",
                            tmp.resolve("claude-task.log").toString(),
                            "--allowedTools",
                            RLM + "*"),
                    RUN_TIMEOUT);
            runs.add(result);
            report.add(testName + ": claude -p exit " + result.exit() + " after " + result.millis() + " ms");
            List<ProcessHandle> left = stdio ? awaitGone(data, Duration.ofSeconds(20)) : List.of();
            SoftAssertions softly = new SoftAssertions();
            softly.assertThat(model.failures())
                    .as("the scripted model's own failures")
                    .isEmpty();
            softly.assertThat(result.exit())
                    .as("claude's exit code\n%s", result)
                    .isZero();
            softly.assertThat(result.json().path("is_error").asBoolean(true))
                    .as("claude's result is_error")
                    .isFalse();
            softly.assertThat(result.json().path("permission_denials"))
                    .as("permission denials")
                    .isEmpty();
            softly.assertThat(result.json()
                            .path("subagent_stats")
                            .path("completed")
                            .asInt())
                    .as("sub-agents completed: %s", result.json().path("subagent_stats"))
                    .isEqualTo(SUBAGENTS);
            softly.assertThat(left)
                    .as("the stdio server and its kernels, after Claude Code exited")
                    .isEmpty();
            left.forEach(ProcessHandle::destroyForcibly);
            softly.assertThat(result.json().path("result").asText())
                    .as("the final answer")
                    .isEqualTo("Done: " + task.resultLine());
            check(softly);
            softly.assertAll();
        } catch (Throwable e) {
            throw new AssertionError(e.getMessage() + "\n\n" + evidence(runs), e);
        }
    }

    // --- the scripted model: the main agent ---

    private static Step call(String tool, Map<String, ?> input) {
        return request -> List.of(Block.call(tool, input));
    }

    private List<Step> taskScript() {
        return List.of(
                call(
                        "ToolSearch",
                        Map.of(
                                "query",
                                "select:" + RLM + "rlm_load_file," + RLM + "rlm_execute," + RLM + "rlm_pending," + RLM
                                        + "rlm_answer," + RLM + "rlm_sessions")),
                call(RLM + "rlm_load_file", Map.of("path", SubCallsTask.PATH, "name", "log", "data_type", "lines")),
                request -> List.of(Block.call(
                        RLM + "rlm_execute", Map.of("session_id", session(request), "code", SubCallsTask.STEP))),
                // six of the eight prompts, read whole at once; then answered, each from what it says
                request -> {
                    List<Block> reads = new ArrayList<>();
                    for (Pending p : mine(request)) {
                        reads.add(
                                Block.call(RLM + "rlm_pending", Map.of("session_id", session(request), "id", p.id())));
                    }
                    return reads;
                },
                request -> {
                    List<Map<String, String>> answers = new ArrayList<>();
                    List<Pending> mine = mine(request);
                    for (int i = 0; i < mine.size(); i++) {
                        int n = SubCallsTask.errorLines(resultOf(request, "task", 3, i));
                        answers.add(Map.of("id", mine.get(i).id(), "text", Integer.toString(n)));
                    }
                    return List.of(
                            Block.call(RLM + "rlm_answer", Map.of("session_id", session(request), "answers", answers)));
                },
                // the last two go to two sub-agents at once, in the foreground: the next turn needs them answered,
                // and the one that answers last gets the rest of the step
                request -> {
                    List<Block> agents = new ArrayList<>();
                    for (Pending p : llmPending(request).subList(0, SUBAGENTS)) {
                        agents.add(Block.call("Agent", agentInput(session(request), p.id())));
                    }
                    return agents;
                },
                // the step went on to rlm_query: what it waits for now, then work in the child session
                request -> List.of(Block.call(RLM + "rlm_pending", Map.of("session_id", session(request)))),
                request -> List.of(Block.call(
                        RLM + "rlm_execute",
                        Map.of("session_id", rlmPending(request).childSession(), "code", SubCallsTask.CHILD_CODE))),
                request -> List.of(Block.call(
                        RLM + "rlm_answer",
                        Map.of(
                                "session_id",
                                session(request),
                                "answers",
                                List.of(Map.of("id", rlmPending(request).id(), "var", "result"))))),
                // the child session is gone with the step that made it
                call(RLM + "rlm_sessions", Map.of()),
                request -> List.of(Block.say("Done: " + resultLine(resultOf(request, "task", 8, 0)))));
    }

    private static Map<String, Object> agentInput(String session, String id) {
        return Map.of(
                "description",
                "Answer rlm sub-call " + id,
                "prompt",
                "The rlm session " + session + " waits for sub-call " + id
                        + ". Read its whole prompt with the rlm_pending tool (session_id, id), do what it asks, "
                        + "answer it with the rlm_answer tool and tell me the answer you gave.",
                "subagent_type",
                "general-purpose",
                "run_in_background",
                false);
    }

    /** The requests the main agent answers itself: all but the first {@link #SUBAGENTS}. */
    private static List<Pending> mine(Request request) {
        return llmPending(request).subList(SUBAGENTS, SubCallsTask.CHUNKS);
    }

    /** The 8 llm requests the step's first reply lists. */
    private static List<Pending> llmPending(Request request) {
        List<Pending> pending = List.copyOf(
                SubCallsTask.pending(resultOf(request, "task", 2, 0)).values());
        if (pending.size() != SubCallsTask.CHUNKS
                || pending.stream().anyMatch(p -> !p.kind().equals("llm"))) {
            throw new AssertionError("not 8 llm requests pending in:\n" + resultOf(request, "task", 2, 0));
        }
        return pending;
    }

    /** The one rlm request rlm_pending lists once every llm request has its answer (the step is at rlm_query). */
    private static Pending rlmPending(Request request) {
        String reply = resultOf(request, "task", 6, 0);
        List<Pending> pending = List.copyOf(SubCallsTask.pending(reply).values());
        if (pending.size() != 1
                || !pending.getFirst().kind().equals("rlm")
                || pending.getFirst().childSession() == null) {
            throw new AssertionError("not one rlm request with a child session pending in:\n" + reply);
        }
        return pending.getFirst();
    }

    // --- the scripted model: the sub-agent ---

    private static final Pattern HANDED = Pattern.compile("rlm session (s-[0-9a-f]+) waits for sub-call (q\\d+)");

    private static List<Step> subagentScript() {
        return List.of(
                call("ToolSearch", Map.of("query", "select:" + RLM + "rlm_pending," + RLM + "rlm_answer")),
                request -> {
                    Matcher m = handed(request);
                    return List.of(Block.call(RLM + "rlm_pending", Map.of("session_id", m.group(1), "id", m.group(2))));
                },
                request -> {
                    Matcher m = handed(request);
                    int n = SubCallsTask.errorLines(resultOf(request, "sub", 1, 0));
                    return List.of(Block.call(
                            RLM + "rlm_answer",
                            Map.of(
                                    "session_id",
                                    m.group(1),
                                    "answers",
                                    List.of(Map.of("id", m.group(2), "text", Integer.toString(n))))));
                },
                request -> {
                    int n = SubCallsTask.errorLines(resultOf(request, "sub", 1, 0));
                    return List.of(Block.say("Answered " + handed(request).group(2) + " with " + n + "."));
                });
    }

    private static Matcher handed(Request request) {
        Matcher m = HANDED.matcher(request.firstUserText());
        if (!m.find()) {
            throw new AssertionError("the sub-agent's prompt names no session and request: " + request.firstUserText());
        }
        return m;
    }

    // --- reading the conversation ---

    /** The session the first reply named (the connection's default session, where the log was loaded). */
    private static String session(Request request) {
        Matcher m = SESSION_ID.matcher(resultOf(request, "task", 1, 0));
        if (!m.find()) {
            throw new AssertionError("no session id in the load's reply: " + resultOf(request, "task", 1, 0));
        }
        return m.group();
    }

    /** The text of the result of the n-th call a run's step made, as the model reads it. */
    static String resultOf(Request request, String run, int step, int n) {
        JsonNode block = resultBlock(request, run, step, n);
        if (block == null) {
            throw new AssertionError("no result for call " + n + " of step " + step + " of run " + run);
        }
        return AnthropicEndpoint.resultText(block);
    }

    /** The tool_result block of that call (a sub-agent's call ids end with its request's index). */
    static JsonNode resultBlock(Request request, String run, int step, int n) {
        String id = "toolu_" + run + "_" + step + "_" + n;
        return request.toolResults().stream()
                .filter(r -> r.path("tool_use_id").asText().equals(id)
                        || r.path("tool_use_id").asText().startsWith(id + "_"))
                .findFirst()
                .orElse(null);
    }

    /** The line the step printed at its end. */
    private static String resultLine(String reply) {
        return reply.lines()
                .filter(l -> l.startsWith("RESULT "))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no RESULT line in:\n" + reply));
    }

    // --- what reached the model ---

    private void check(SoftAssertions softly) {
        AgentSubCallsChecks checks = new AgentSubCallsChecks(softly, task, report, testName);
        List<Request> turns = model.mainTurns("task");
        Map<String, List<Request>> subagents = model.subagentTurns("sub");
        softly.assertThat(subagents).as("sub-agents that followed the script").hasSize(SUBAGENTS);
        if (turns.isEmpty() || subagents.size() != SUBAGENTS) {
            return;
        }
        checks.offered(turns.getFirst());
        List<Request> subs = subagents.values().stream().map(List::getLast).toList();
        checks.mainAndSubagents(turns.getLast(), subs);
    }

    // --- processes and evidence ---

    private static List<ProcessHandle> awaitGone(Path path, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<ProcessHandle> left = ClaudeCode.processesMentioning(path);
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(200);
            left = ClaudeCode.processesMentioning(path);
        }
        return left;
    }

    private String evidence(List<ClaudeCode.Result> runs) {
        StringBuilder out = new StringBuilder();
        Path dir = McpDriver.projectRoot().resolve("target/claude-code-e2e");
        Path dump = dir.resolve("AgentSubCalls-" + testName + "-requests.jsonl");
        try {
            model.dump(dump);
            out.append("every request Claude Code sent: ").append(dump).append('\n');
            Path debug = tmp.resolve("claude-task.log");
            if (Files.exists(debug)) {
                Files.copy(
                        debug,
                        dir.resolve("AgentSubCalls-" + testName + "-claude-task.log"),
                        StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            out.append("(could not write ").append(dump).append(": ").append(e).append(")\n");
        }
        runs.forEach(run -> out.append("claude: ").append(run).append('\n'));
        for (Request r : model.requests()) {
            out.append("request ").append(r.index()).append(' ').append(r.path());
            out.append(r.main() ? " main turn" : r.subagent() ? " sub-agent " + r.agent() : " side request");
            out.append('\n');
        }
        List<Request> turns = model.mainTurns("task");
        List<Request> all = new ArrayList<>(turns.isEmpty() ? List.of() : List.of(turns.getLast()));
        model.subagentTurns("sub").values().forEach(t -> all.add(t.getLast()));
        for (Request r : all) {
            out.append("--- the tool calls and results of request ")
                    .append(r.index())
                    .append(" ---\n");
            for (JsonNode block : r.blocks()) {
                String type = block.path("type").asText();
                if (type.equals("tool_use") || type.equals("tool_result")) {
                    String s = block.toString();
                    out.append(s.length() > 1500 ? s.substring(0, 1500) + "…" : s)
                            .append('\n');
                }
            }
        }
        model.failures().forEach(f -> out.append("endpoint failure: ").append(f).append('\n'));
        out.append("--- claude debug log, MCP lines ---\n")
                .append(ClaudeCode.grep(tmp.resolve("claude-task.log"), "MCP server \"rlm\"", "[MCP]", "[ERROR]"));
        if (server != null) {
            out.append("--- server log ---\n").append(server.log());
        }
        return out.toString();
    }
}

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
import dev.rlmmcp.e2e.support.UserLaunch;
import dev.rlmmcp.e2e.support.UserServer;
import dev.rlmmcp.e2e.support.WebLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real Claude Code (the version pinned in {@code e2e/package-lock.json}) on a real task, registered exactly
 * as the README says, over stdio and over HTTP, run non-interactively ({@code claude -p}) against a scripted
 * model on loopback ({@link AnthropicEndpoint}): load a 20 MB access log, several directories deep under the
 * data root, as lines; count requests by status; list the variables; keep one more variable; exit. Then a
 * second {@code claude -p --resume} process continues the conversation and checks that the server's session,
 * named by the id an earlier reply gave, still has every variable.
 *
 * <p>What is checked is what reaches the model, read from the requests Claude Code sends: the rlm tools are
 * named in its first request (Claude Code defers MCP tools behind its ToolSearch tool: names first, schemas
 * once searched), the server's instructions appear once, every answer is right, and each tool result puts a
 * small number of bytes in front of the model, once (a JSON reply is not shown as both text and
 * {@code structuredContent}). Claude Code stops a stdio server itself when it exits (SIGINT, SIGTERM 100 ms
 * later, SIGKILL 500 ms after the first); the server and its kernels must then be gone, and what the last
 * reply reported must still be there for the resumed conversation. On failure the requests are in
 * {@code target/claude-code-e2e/}.
 */
class ClaudeCodeIT {

    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(120);
    private static final String ALLOW_RLM = "mcp__rlm__*";
    private static final String LOG_PATH = "logs/2026/11/web-01/access.log";
    private static final String COUNT = "from collections import Counter\n"
            + "by_status = Counter(line.split('\"')[2].split()[0] for line in log)\n"
            + "print(len(log), sorted(by_status.items()))";
    private static final Pattern RLM_TOOL = Pattern.compile("mcp__rlm__[a-z0-9_]+");
    private static final Pattern SESSION_ID = Pattern.compile("\\bs-[0-9a-f]{12,}\\b");

    @TempDir
    Path tmp;

    private Path home;
    private Path project;
    private Path data;
    private WebLog log;
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
        log = WebLog.write(data.resolve(LOG_PATH), 20_000_000);
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
            // every process this test started (a stdio server Claude Code left, kernels) is gone
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
        // the README's line, as it is
        ClaudeCode.Result add =
                claude.mcpAdd("rlm", "--", launcher.toString(), "stdio", "--data-root", data.toString());
        assertThat(add.exit()).as("claude mcp add (stdio)\n%s", add).isZero();
        listed();
        task(true);
    }

    @Test
    void http() throws Exception {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("HOME", home.toString());
        env.put("XDG_DATA_HOME", home.resolve(".local/share").toString());
        long start = System.nanoTime();
        server = UserServer.start(UserLaunch.here(data, env));
        report.add(testName + ": bin/rlm-mcp serve listening after " + (System.nanoTime() - start) / 1_000_000 + " ms");
        ClaudeCode.Result add = claude.mcpAdd("--transport", "http", "rlm", server.mcpUrl());
        assertThat(add.exit()).as("claude mcp add (http)\n%s", add).isZero();
        listed();
        task(false);
    }

    /** {@code claude mcp list}, as a user checks a new server: it connects. */
    private void listed() {
        ClaudeCode.Result list = claude.run(List.of("mcp", "list"), RUN_TIMEOUT);
        report.add(testName + ": claude mcp list after " + list.millis() + " ms: "
                + list.stdout().strip());
        assertThat(list.stdout()).as("claude mcp list\n%s", list).containsPattern("(?m)^rlm: .*Connected");
    }

    /** The task, then the resumed conversation; {@code stdio}: Claude Code runs (and stops) the server. */
    private void task(boolean stdio) throws Exception {
        List<ClaudeCode.Result> runs = new ArrayList<>();
        try {
            model.script("task", taskScript());
            ClaudeCode.Result first = print(
                    "task",
                    "Load " + LOG_PATH + " from the rlm data root as lines, count the "
                            + "requests by status, list the variables and keep the summary in a variable.");
            runs.add(first);
            List<ProcessHandle> left = List.of();
            if (stdio) {
                left = awaitGone(data, Duration.ofSeconds(20));
                report.add(testName + ": Claude Code stopping the stdio server:\n"
                        + ClaudeCode.grep(
                                tmp.resolve("claude-task.log"), "to MCP server process", "connection closed"));
            }

            model.script("resume", resumeScript());
            ClaudeCode.Result second = print(
                    "resume",
                    "Check that the rlm session still has every variable.",
                    "--resume",
                    first.json().path("session_id").asText());
            runs.add(second);

            SoftAssertions softly = new SoftAssertions();
            softly.assertThat(model.failures())
                    .as("the scripted model's own failures")
                    .isEmpty();
            for (ClaudeCode.Result run : runs) {
                softly.assertThat(run.exit()).as("claude's exit code\n%s", run).isZero();
                softly.assertThat(run.json().path("is_error").asBoolean(true))
                        .as("claude's result is_error")
                        .isFalse();
                softly.assertThat(run.json().path("permission_denials"))
                        .as("permission denials")
                        .isEmpty();
            }
            softly.assertThat(left)
                    .as("the stdio server and its kernels, after Claude Code exited")
                    .isEmpty();
            left.forEach(ProcessHandle::destroyForcibly);
            checkFirstTurn(softly);
            checkTask(softly, first);
            checkResumed(softly, second);
            softly.assertAll();
        } catch (Throwable e) {
            throw new AssertionError(e.getMessage() + "\n\n" + evidence(runs), e);
        }
    }

    private ClaudeCode.Result print(String run, String prompt, String... more) {
        List<String> args = new ArrayList<>(List.of(
                "-p",
                prompt,
                "--output-format",
                "json",
                "--debug-file",
                tmp.resolve("claude-" + run + ".log").toString()));
        args.addAll(List.of(more));
        // the only permission a headless run needs (as root, --dangerously-skip-permissions is refused)
        args.addAll(List.of("--allowedTools", ALLOW_RLM));
        ClaudeCode.Result result = claude.run(args, RUN_TIMEOUT);
        report.add(testName + ": claude -p (" + run + ") exit " + result.exit() + " after " + result.millis() + " ms");
        return result;
    }

    // --- the scripted model ---

    private static Step call(String tool, Map<String, ?> input) {
        return request -> List.of(Block.call(tool, input));
    }

    private List<Step> taskScript() {
        return List.of(
                call(
                        "ToolSearch",
                        Map.of(
                                "query",
                                "select:mcp__rlm__rlm_load_file,mcp__rlm__rlm_execute," + "mcp__rlm__rlm_list_vars")),
                call("mcp__rlm__rlm_load_file", Map.of("path", LOG_PATH, "name", "log", "data_type", "lines")),
                call("mcp__rlm__rlm_execute", Map.of("code", COUNT)),
                call("mcp__rlm__rlm_list_vars", Map.of()),
                // the model keeps what the count printed, as it read it
                request -> List.of(Block.call(
                        "mcp__rlm__rlm_execute",
                        Map.of(
                                "code",
                                "summary = "
                                        + AnthropicEndpoint.JSON.valueToTree(firstLine(resultOf(request, "task", 2)))
                                        + "\nprint(summary)",
                                "response_format",
                                "json"))),
                request -> List.of(Block.say("Counted " + firstLine(resultOf(request, "task", 2)))));
    }

    private List<Step> resumeScript() {
        return List.of(
                call("ToolSearch", Map.of("query", "select:mcp__rlm__rlm_list_vars,mcp__rlm__rlm_execute")),
                // the session id comes from the earlier replies in the resumed conversation
                request -> List.of(Block.call("mcp__rlm__rlm_list_vars", Map.of("session_id", sessionIn(request)))),
                request -> List.of(Block.call(
                        "mcp__rlm__rlm_execute",
                        Map.of(
                                "session_id",
                                sessionIn(request),
                                "code",
                                "print(summary)\nprint(len(log), sum(by_status.values()))"))),
                request -> List.of(Block.say("The session has every variable.")));
    }

    private static String sessionIn(Request request) {
        for (JsonNode result : request.toolResults()) {
            Matcher m = SESSION_ID.matcher(AnthropicEndpoint.resultText(result));
            if (m.find()) {
                return m.group();
            }
        }
        throw new AssertionError("no rlm session id in any tool result of the conversation");
    }

    /** The text of the result of the call a run's step made, as the model reads it. */
    private static String resultOf(Request request, String run, int step) {
        JsonNode block = resultBlock(request, run, step);
        if (block == null) {
            throw new AssertionError("no result for step " + step + " of run " + run);
        }
        return AnthropicEndpoint.resultText(block);
    }

    private static JsonNode resultBlock(Request request, String run, int step) {
        String id = "toolu_" + run + "_" + step + "_0";
        return request.toolResults().stream()
                .filter(r -> id.equals(r.path("tool_use_id").asText()))
                .findFirst()
                .orElse(null);
    }

    private static String firstLine(String text) {
        int nl = text.indexOf('\n');
        return nl < 0 ? text : text.substring(0, nl);
    }

    // --- what reached the model ---

    /** The rlm tools are named in the first request, the server's instructions appear once. */
    private void checkFirstTurn(SoftAssertions softly) {
        List<Request> turns = model.mainTurns("task");
        softly.assertThat(turns).as("main turns of the task").isNotEmpty();
        if (turns.isEmpty()) {
            return;
        }
        Set<String> first = toolNames(turns.getFirst());
        Set<String> all = toolNames(turns.getLast());
        // no S3 configured, and Claude Code does not sample with no model API: 18 of the 23 tools can work
        softly.assertThat(all)
                .as("rlm tools Claude Code knows of by the task's last turn")
                .hasSize(18)
                .doesNotContain("mcp__rlm__rlm_solve", "mcp__rlm__rlm_load_s3");
        String said = ClaudeCode.grep(
                tmp.resolve("claude-task.log"),
                "Starting connection",
                "Successfully connected",
                "turn 1 start",
                "dispatching");
        if (negotiated2026()) {
            // on 2026-07-28 Claude Code fetches an MCP server's tools when its ToolSearch first asks, not before its
            // first request: what matters is that the server was connected by then
            String log = readLog();
            int connected = log.indexOf("Successfully connected");
            softly.assertThat(connected)
                    .as(
                            "the server connected before Claude Code's first turn (it waits about 2 s). Claude Code said:%n%s",
                            said)
                    .isBetween(0, log.indexOf("turn 1 start"));
        } else {
            softly.assertThat(first)
                    .as(
                            "rlm tools named in the model's FIRST request (claude -p waits about 2 s for an MCP server "
                                    + "before it; a server not ready by then is only named as 'still connecting'). Claude Code said:%n%s",
                            said)
                    .isEqualTo(all);
        }
        String instructions = instructions(turns.getLast());
        softly.assertThat(instructions)
                .as("the server's instructions in Claude Code's request")
                .isNotEmpty();
        for (Request turn : List.of(turns.getFirst(), turns.getLast())) {
            if (!toolNames(turn).isEmpty()) {
                softly.assertThat(count(strings(turn.body()), instructions))
                        .as("times the instructions appear in " + "request %d", turn.index())
                        .isEqualTo(1);
            }
        }
        report.add(testName + ": first request names " + first.size() + " of " + all.size() + " rlm tools; "
                + "instructions: " + instructions.getBytes(StandardCharsets.UTF_8).length + " B, once per request, "
                + "under '# MCP Server Instructions' / '## rlm'");
    }

    private String readLog() {
        try {
            return Files.readString(tmp.resolve("claude-task.log"), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    /** Whether Claude Code spoke MCP 2026-07-28 to the server ("modern" in its debug log). */
    private boolean negotiated2026() {
        return readLog().contains("\"negotiatedProtocolVersion\":\"2026-07-28\"");
    }

    private void checkTask(SoftAssertions softly, ClaudeCode.Result run) {
        Request last = model.mainTurns("task").getLast();
        String load = resultOf(last, "task", 1);
        String count = resultOf(last, "task", 2);
        String vars = resultOf(last, "task", 3);
        String set = resultOf(last, "task", 4);
        softly.assertThat(load).as("load reply").contains(String.format("log: list, %,d items", log.lines()));
        softly.assertThat(firstLine(count)).as("count reply").isEqualTo(log.countLine());
        softly.assertThat(variables(vars)).as("list_vars reply").contains("log", "by_status");
        JsonNode setReply = parse(set);
        softly.assertThat(setReply.path("status").asText())
                .as("JSON reply, as the model reads it: %s", set)
                .isEqualTo("ok");
        softly.assertThat(setReply.path("variables_changed").toString()).isEqualTo("[\"summary\"]");
        softly.assertThat(run.json().path("result").asText()).isEqualTo("Counted " + log.countLine());
        for (int step = 1; step <= 4; step++) {
            JsonNode block = resultBlock(last, "task", step);
            softly.assertThat(block.path("is_error").asBoolean(false))
                    .as("is_error of step %d", step)
                    .isFalse();
        }
        // what each reply puts in front of the model: small, and once
        bytes(softly, "rlm_load_file (text)", resultBlock(last, "task", 1), 400);
        bytes(softly, "rlm_execute count (text)", resultBlock(last, "task", 2), 400);
        bytes(softly, "rlm_list_vars (text)", resultBlock(last, "task", 3), 600);
        bytes(softly, "rlm_execute set (json)", resultBlock(last, "task", 4), 800);
        softly.assertThat(resultBlock(last, "task", 1).path("content").size())
                .as("text reply: one text block")
                .isEqualTo(1);
    }

    private void checkResumed(SoftAssertions softly, ClaudeCode.Result run) {
        List<Request> turns = model.mainTurns("resume");
        softly.assertThat(turns).as("main turns of the resumed conversation").isNotEmpty();
        if (turns.isEmpty()) {
            return;
        }
        Request last = turns.getLast();
        Set<String> before =
                new TreeSet<>(variables(resultOf(model.mainTurns("task").getLast(), "task", 3)));
        before.add("summary");
        String vars = resultOf(last, "resume", 1);
        softly.assertThat(variables(vars))
                .as("variables of the resumed session, reply:\n%s", vars)
                .containsAll(before);
        softly.assertThat(resultOf(last, "resume", 2))
                .as("the resumed session's values")
                .contains(log.countLine() + "\n" + log.lines() + " " + log.lines());
        bytes(softly, "rlm_list_vars resumed (text)", resultBlock(last, "resume", 1), 700);
        bytes(softly, "rlm_execute resumed (text)", resultBlock(last, "resume", 2), 400);
        softly.assertThat(run.json().path("result").asText()).isEqualTo("The session has every variable.");
    }

    private void bytes(SoftAssertions softly, String what, JsonNode toolResult, int most) {
        if (toolResult == null) {
            softly.fail("no tool result for " + what);
            return;
        }
        String text = AnthropicEndpoint.resultText(toolResult);
        int n = text.getBytes(StandardCharsets.UTF_8).length;
        report.add(String.format(
                "%s: %-32s %5d B in front of the model (content as %s)",
                testName, what, n, toolResult.path("content").isTextual() ? "a string" : "text blocks"));
        softly.assertThat(n)
                .as("bytes of %s in front of the model: %s", what, text)
                .isLessThanOrEqualTo(most);
    }

    private static Set<String> toolNames(Request request) {
        Set<String> names = new TreeSet<>();
        Matcher m = RLM_TOOL.matcher(request.text());
        while (m.find()) {
            names.add(m.group());
        }
        return names;
    }

    /** The server's instructions as Claude Code shows them: the text under "## rlm" of its MCP section. */
    private static String instructions(Request request) {
        for (String s : strings(request.body())) {
            int section = s.indexOf("# MCP Server Instructions");
            int own = section < 0 ? -1 : s.indexOf("\n## rlm\n", section);
            if (own >= 0) {
                int start = own + "\n## rlm\n".length();
                int end = s.indexOf("\n\n", start);
                return s.substring(start, end < 0 ? s.length() : end).strip();
            }
        }
        return "";
    }

    /** Every string value in a JSON tree (what a request shows the model, piece by piece). */
    private static List<String> strings(JsonNode node) {
        List<String> out = new ArrayList<>();
        collect(node, out);
        return out;
    }

    private static void collect(JsonNode node, List<String> out) {
        if (node.isTextual()) {
            out.add(node.asText());
        }
        node.forEach(child -> collect(child, out));
    }

    private static int count(List<String> strings, String needle) {
        int n = 0;
        for (String s : strings) {
            for (int i = s.indexOf(needle); i >= 0; i = s.indexOf(needle, i + needle.length())) {
                n++;
            }
        }
        return n;
    }

    /** The names in the first column of a {@code rlm_list_vars} text table. */
    private static Set<String> variables(String table) {
        Set<String> names = new LinkedHashSet<>();
        String[] lines = table.split("\n");
        for (int i = 1; i < lines.length; i++) {
            if (lines[i].contains(" | ")) {
                names.add(lines[i].substring(0, lines[i].indexOf(" | ")).strip());
            }
        }
        return names;
    }

    private static JsonNode parse(String json) {
        try {
            return AnthropicEndpoint.JSON.readTree(json);
        } catch (IOException e) {
            return AnthropicEndpoint.JSON.createObjectNode().put("unparsed", json);
        }
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

    /** The runs' output, a transcript of the main turns and where every request was written. */
    private String evidence(List<ClaudeCode.Result> runs) {
        StringBuilder out = new StringBuilder();
        Path dir = McpDriver.projectRoot().resolve("target/claude-code-e2e");
        Path dump = dir.resolve(testName + "-requests.jsonl");
        try {
            model.dump(dump);
            out.append("every request Claude Code sent: ").append(dump).append('\n');
            for (String run : List.of("task", "resume")) {
                Path debug = tmp.resolve("claude-" + run + ".log");
                if (Files.exists(debug)) {
                    Files.copy(
                            debug,
                            dir.resolve(testName + "-claude-" + run + ".log"),
                            StandardCopyOption.REPLACE_EXISTING);
                }
            }
            out.append("Claude Code's debug logs: ")
                    .append(dir)
                    .append('/')
                    .append(testName)
                    .append("-claude-*.log\n");
        } catch (IOException e) {
            out.append("(could not write ").append(dump).append(": ").append(e).append(")\n");
        }
        for (ClaudeCode.Result run : runs) {
            out.append("claude: ").append(run).append('\n');
        }
        for (Request r : model.requests()) {
            out.append("request ")
                    .append(r.index())
                    .append(' ')
                    .append(r.method())
                    .append(' ')
                    .append(r.path())
                    .append(r.main() ? " main turn of run " + r.run() : " side request")
                    .append('\n');
        }
        for (String run : List.of("task", "resume")) {
            List<Request> turns = model.mainTurns(run);
            if (turns.isEmpty()) {
                continue;
            }
            out.append("--- run ").append(run).append(": the last main turn's tool calls and results ---\n");
            for (JsonNode block : turns.getLast().blocks()) {
                String type = block.path("type").asText();
                if (type.equals("tool_use") || type.equals("tool_result")) {
                    String s = block.toString();
                    out.append(s.length() > 1500 ? s.substring(0, 1500) + "…" : s)
                            .append('\n');
                }
            }
            out.append("first request, rlm tools named: ")
                    .append(toolNames(turns.getFirst()))
                    .append('\n');
        }
        for (Throwable f : model.failures()) {
            out.append("endpoint failure: ").append(f).append('\n');
        }
        for (String run : List.of("task", "resume")) {
            out.append("--- claude debug log (")
                    .append(run)
                    .append("), MCP lines ---\n")
                    .append(ClaudeCode.grep(
                            tmp.resolve("claude-" + run + ".log"), "MCP server \"rlm\"", "[MCP]", "[ERROR]"));
        }
        if (server != null) {
            out.append("--- server log ---\n").append(server.log());
        }
        return out.toString();
    }
}

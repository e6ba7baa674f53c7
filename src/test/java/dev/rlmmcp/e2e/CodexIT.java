package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.e2e.support.ClosedAfterEach;
import dev.rlmmcp.e2e.support.CodexCli;
import dev.rlmmcp.e2e.support.Journey;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ResponsesEndpoint;
import dev.rlmmcp.e2e.support.ResponsesEndpoint.Exec;
import dev.rlmmcp.e2e.support.ResponsesEndpoint.Say;
import dev.rlmmcp.e2e.support.StartupCache;
import dev.rlmmcp.e2e.support.UserLaunch;
import dev.rlmmcp.e2e.support.UserServer;
import dev.rlmmcp.e2e.support.WebLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real Codex CLI ({@code @openai/codex} of {@code e2e/}), registered exactly as the README's Codex
 * snippets say, over stdio and over HTTP, driven by a scripted model ({@link ResponsesEndpoint}): it loads a
 * 20 MB access log as lines, counts and groups it, lists the variables and sets one more; Codex then ends
 * (stopping a stdio server as it does: SIGTERM to the server's process group, SIGKILL ~250 ms later), and a
 * second {@code codex exec resume} process finds the session by its id and checks every variable.
 *
 * <p>Codex 0.169 runs its default model in code mode: the model's one tool is {@code exec}, JavaScript in
 * which MCP tools are {@code tools.mcp__rlm__<tool>(args)}, each answering the whole {@code CallToolResult};
 * the model sees what the script prints. The scripted model prints each result whole ({@code text(result)}),
 * as a model does that does not know a result's shape, so the bytes measured per tool result are what a
 * result puts in front of the model.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class CodexIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(150);
    private static final String LOG_PATH = "srv/www/shop/logs/2026/11/access.log";
    private static final Pattern SESSION = Pattern.compile("session (s-[0-9a-f]+)");
    private static final Pattern NAMESPACE = Pattern.compile("(?m)^- mcp__rlm: (.*)$");
    private static final String COUNT = """
            import json
            from collections import Counter
            status, methods = Counter(), Counter()
            for line in log:
                request, rest = line.split('"')[1:3]
                methods[request.split()[0]] += 1
                status[rest.split()[0]] += 1
            print(json.dumps({"lines": len(log), "status": dict(sorted(status.items())),
                              "methods": dict(sorted(methods.items()))}))""";
    private static final String SET_ONE_MORE =
            "server_errors = sum(n for code, n in status.items() if code.startswith('5'))";
    private static final String CHECK = """
            import json
            print(json.dumps({"lines": len(log), "server_errors": server_errors, "status": dict(sorted(status.items()))}))""";

    @TempDir
    static Path shared;

    private static Path dataRoot;
    private static WebLog webLog;

    @TempDir
    Path tmp;

    @RegisterExtension
    final ClosedAfterEach open = new ClosedAfterEach();

    private final Set<ProcessHandle> started = new LinkedHashSet<>();

    @BeforeAll
    static void log() throws IOException {
        dataRoot = Journey.dirs(shared, "data");
        webLog = WebLog.write(dataRoot.resolve(LOG_PATH), 20L << 20);
    }

    @BeforeEach
    void killWhatCodexStartedLast() {
        open.add(() -> started.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly));
    }

    @Test
    void stdio(TestInfo test) throws Exception {
        String registration = readmeSnippet(0)
                .replace("/path/to/rlm-mcp", McpDriver.projectRoot().toString())
                .replace("/path/to/your/data", dataRoot.toString());
        journey(test, registration, true);
        // Codex passes a stdio server only a few variables of its own environment, HOME among them: the
        // sessions are kept below the HOME Codex runs with
        assertThat(tmp.resolve("home/.local/share/rlm-mcp/projects")).isDirectory();
    }

    @Test
    void http(TestInfo test) throws Exception {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("HOME", Journey.dirs(tmp, "server-home").toString());
        env.put("XDG_DATA_HOME", null);
        UserServer server = open.add(UserServer.start(UserLaunch.here(tmp, env), "--data-root", dataRoot.toString()));
        String registration = readmeSnippet(1).replace("http://127.0.0.1:8765/mcp", server.mcpUrl());
        journey(test, registration, false);
    }

    /**
     * A newcomer's first start (a home of its own, so no answers kept by an earlier start) registered without
     * {@code required = true}, beside a process spinning on one core: Codex gives such a server a second, and
     * leaves out of the first turn the tools of one that has not listed them by then.
     */
    @Test
    void aFirstStartWithoutRequiredHasEveryToolAtTheFirstTurn() throws Exception {
        String registration = readmeSnippet(0)
                .replace("/path/to/rlm-mcp", McpDriver.projectRoot().toString())
                .replace("/path/to/your/data", dataRoot.toString())
                .replace("required = true\n", "");
        assertThat(registration).doesNotContain("required");
        ResponsesEndpoint model = open.add(ResponsesEndpoint.start());
        CodexCli codex =
                new CodexCli(tmp.resolve("home"), tmp.resolve("work"), CodexCli.providerConfig(model) + registration);
        model.then(new Exec("""
                        // @exec: {"max_output_tokens": 30000}
                        text(JSON.stringify(ALL_TOOLS.filter(t => t.name.startsWith("mcp__rlm__")).map(t => t.name)));""")).then(new Say("Listed."));
        StartupCache.await(Duration.ofMinutes(2)); // as bin/rlm-mcp build leaves it
        Process busy = new ProcessBuilder("python3", "-c", "while True: pass").start();
        AutoCloseable stopBusy = busy::destroyForcibly;
        open.add(stopBusy);
        CodexCli.Run run = codex.exec("List the rlm tools.", RUN_TIMEOUT);
        started.addAll(run.started());
        assertThat(run.exit()).as("codex exec\n%s", run).isZero();
        List<Output> outputs = outputs(model);
        assertThat(outputs).as("exec outputs").hasSize(1);
        assertThat(JSON.readTree(outputs.getFirst().printed()))
                .as("rlm tools in ALL_TOOLS at the first turn of a first start")
                .hasSize(18);
    }

    /** The README's n-th TOML block of the Codex section (0: stdio, 1: HTTP). */
    static String readmeSnippet(int n) throws IOException {
        String readme = Files.readString(McpDriver.projectRoot().resolve("README.md"));
        String codex = readme.substring(readme.indexOf("**Codex**"));
        Matcher block = Pattern.compile("```toml\n(.*?)```", Pattern.DOTALL).matcher(codex);
        for (int i = 0; i <= n; i++) {
            assertThat(block.find())
                    .as("TOML block %d of the README's Codex section", i)
                    .isTrue();
        }
        return block.group(1);
    }

    private void journey(TestInfo test, String registration, boolean codexStopsServer) throws Exception {
        ResponsesEndpoint model = open.add(ResponsesEndpoint.start());
        CodexCli codex =
                new CodexCli(tmp.resolve("home"), tmp.resolve("work"), CodexCli.providerConfig(model) + registration);
        try {
            model.then(new Exec("""
                            // @exec: {"max_output_tokens": 30000}
                            text(JSON.stringify(ALL_TOOLS.filter(t => t.name.startsWith("mcp__rlm__"))));"""))
                    .then(call("rlm_load_file", Map.of("path", LOG_PATH, "name", "log", "data_type", "lines")))
                    .then(call("rlm_execute", Map.of("code", COUNT)))
                    .then(call("rlm_list_vars", Map.of()))
                    .then(call("rlm_execute", Map.of("code", SET_ONE_MORE)))
                    .then(new Say("The log has its counts in `status` and `methods`; `server_errors` is set."));
            CodexCli.Run first = codex.exec(
                    "Load " + LOG_PATH + " as lines, count its status codes and methods, " + "then set server_errors.",
                    RUN_TIMEOUT);
            started.addAll(first.started());
            assertThat(first.exit()).as("codex exec\n%s", first).isZero();
            if (codexStopsServer) {
                assertGone(first);
            }

            model.then(request -> call("rlm_list_vars", Map.of("session_id", sessionIdIn(request))))
                    .then(request -> call(
                            "rlm_execute",
                            Map.of("session_id", sessionIdIn(request), "code", CHECK, "response_format", "json")))
                    .then(new Say("Every variable is there."));
            CodexCli.Run second =
                    codex.resume(first.threadId(), "Check that session still has every variable.", RUN_TIMEOUT);
            started.addAll(second.started());
            assertThat(second.exit()).as("codex exec resume\n%s", second).isZero();

            check(model);
        } catch (AssertionError | RuntimeException e) {
            Path dump = model.dump(McpDriver.projectRoot()
                    .resolve("target/codex-e2e")
                    .resolve(test.getTestMethod().orElseThrow().getName() + "-requests.jsonl"));
            throw new AssertionError(
                    e.getMessage() + "\n\nthe scripted model's failures: " + model.failures()
                            + "\nthe conversation at the last request:\n" + model.transcript()
                            + "every request Codex sent: " + dump,
                    e);
        }
    }

    /** The turn that calls one rlm tool from {@code exec} and prints its whole result. */
    private static Exec call(String tool, Map<String, String> args) {
        return new Exec("text(await tools.mcp__rlm__" + tool + "(" + JSON.valueToTree(args) + "));");
    }

    /** The session id the first reply named, as the model reads it in the conversation. */
    private static String sessionIdIn(JsonNode request) {
        Matcher m = SESSION.matcher(request.path("input").toString());
        if (!m.find()) {
            throw new AssertionError("no session id in the conversation");
        }
        return m.group(1);
    }

    /** Every process Codex started (the stdio server, its kernels) is gone soon after Codex ended. */
    private static void assertGone(CodexCli.Run run) throws InterruptedException {
        assertThat(run.started()).as("processes Codex started").isNotEmpty();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (run.started().stream().anyMatch(ProcessHandle::isAlive) && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertThat(run.started().stream()
                        .filter(ProcessHandle::isAlive)
                        .map(p -> p.pid() + " " + p.info().commandLine().orElse("?"))
                        .toList())
                .as("processes Codex started, alive after it ended")
                .isEmpty();
    }

    /** One exec call's output as Codex sent it back to the model. */
    record Output(JsonNode item, String printed) {

        int itemBytes() {
            return item.toString().getBytes(StandardCharsets.UTF_8).length;
        }

        int printedBytes() {
            return printed.getBytes(StandardCharsets.UTF_8).length;
        }

        /** The CallToolResult the script printed. */
        JsonNode result() {
            try {
                return JSON.readTree(printed);
            } catch (IOException e) {
                throw new AssertionError("not a CallToolResult: " + printed, e);
            }
        }

        String text() {
            return result().path("content").path(0).path("text").asText();
        }

        int textBytes() {
            return text().getBytes(StandardCharsets.UTF_8).length;
        }
    }

    /** The outputs of every exec call, in call order, from the conversation of the last request. */
    private static List<Output> outputs(ResponsesEndpoint model) {
        Map<String, Output> byCall = new LinkedHashMap<>();
        for (JsonNode request : model.turns()) {
            for (JsonNode item : request.path("input")) {
                if (!"custom_tool_call_output".equals(item.path("type").asText())) {
                    continue;
                }
                JsonNode output = item.path("output");
                // the first text item is Codex's header ("Script completed ..."); the script printed the rest
                StringBuilder printed = new StringBuilder();
                if (output.isArray()) {
                    for (int i = 1; i < output.size(); i++) {
                        printed.append(output.get(i).path("text").asText());
                    }
                } else {
                    printed.append(output.asText());
                }
                byCall.putIfAbsent(item.path("call_id").asText(), new Output(item, printed.toString()));
            }
        }
        return List.copyOf(byCall.values());
    }

    private void check(ResponsesEndpoint model) throws IOException {
        // the first request already offers the rlm tools (Codex defers MCP tools: it lists the server's
        // namespace with the first line of its instructions); without `required = true` it does not
        JsonNode first = model.turns().getFirst();
        Matcher namespace = NAMESPACE.matcher(first.path("input").toString().replace("\\n", "\n"));
        assertThat(namespace.find())
                .as("mcp__rlm among the deferred tool namespaces of Codex's first request")
                .isTrue();
        String instructionsFirstLine = namespace.group(1).replace("\\\"", "\"");
        assertThat(model.failures()).as("the scripted model's turns").isEmpty();
        assertThat(model.turnsLeft()).as("scripted turns Codex never asked for").isZero();

        List<Output> outputs = outputs(model);
        assertThat(outputs).as("exec outputs").hasSize(7);
        Output discovery = outputs.get(0);
        Output load = outputs.get(1);
        Output count = outputs.get(2);
        Output listed = outputs.get(3);
        Output setOne = outputs.get(4);
        Output resumedList = outputs.get(5);
        Output resumedCheck = outputs.get(6);

        // at its first turn, the model sees all 20 rlm tools; Codex appends the server's instructions to each
        JsonNode tools = JSON.readTree(discovery.printed());
        assertThat(tools).as("rlm tools in ALL_TOOLS at the first turn").hasSize(18);
        List<Integer> instructionBytes = new ArrayList<>();
        for (JsonNode tool : tools) {
            String description = tool.path("description").asText();
            int from = description.indexOf(instructionsFirstLine);
            int to = description.indexOf("\n\nexec tool declaration:");
            assertThat(from)
                    .as("the server's instructions in %s's description", tool.path("name"))
                    .isPositive();
            instructionBytes.add(description.substring(from - 2, to).getBytes(StandardCharsets.UTF_8).length);
        }
        assertThat(instructionBytes)
                .as("bytes the server's instructions add to each tool description")
                .allMatch(b -> b <= 300);

        // the answers
        for (Output o : List.of(load, count, listed, setOne, resumedCheck)) {
            assertThat(o.result().path("isError").asBoolean())
                    .as("isError of %s", o.printed())
                    .isFalse();
        }
        assertThat(load.text()).as("the load's reply").contains("log").contains(String.format("%,d", webLog.lines()));
        JsonNode counted = JSON.readTree(count.text().lines().findFirst().orElseThrow());
        assertThat(counted.path("lines").asLong()).isEqualTo(webLog.lines());
        assertThat(longs(counted.path("status"))).as("lines per status").isEqualTo(new TreeMap<>(webLog.status()));
        assertThat(longs(counted.path("methods"))).as("lines per method").isEqualTo(new TreeMap<>(webLog.methods()));
        Set<String> before = names(listed.text());
        assertThat(before).as("variables listed").contains("log", "status", "methods");
        assertThat(setOne.text()).as("reply to the last step").contains("set server_errors");

        // what each reply puts in front of the model: the server's text, in a CallToolResult of content and
        // isError only (no structuredContent, also for a JSON reply), so a fixed few dozen bytes more
        System.out.printf("%-26s %8s %10s %10s%n", "tool result", "text B", "printed B", "item B");
        for (Map.Entry<String, Output> row : Map.of(
                        "1 ALL_TOOLS (discovery)",
                        discovery,
                        "2 rlm_load_file",
                        load,
                        "3 rlm_execute count",
                        count,
                        "4 rlm_list_vars",
                        listed,
                        "5 rlm_execute set",
                        setOne,
                        "6 rlm_list_vars resumed",
                        resumedList,
                        "7 rlm_execute json",
                        resumedCheck)
                .entrySet()
                .stream()
                .sorted(Map.Entry.comparingByKey())
                .toList()) {
            Output o = row.getValue();
            System.out.printf(
                    "%-26s %8s %10d %10d%n",
                    row.getKey(),
                    row.getKey().startsWith("1") ? "-" : Integer.toString(o.textBytes()),
                    o.printedBytes(),
                    o.itemBytes());
        }
        System.out.printf(
                "first request: the mcp__rlm namespace line, %d B%n",
                namespace.group().getBytes(StandardCharsets.UTF_8).length);
        System.out.printf(
                "server instructions per tool description: %s B, %d B over the 18 tools%n",
                instructionBytes.getFirst(),
                instructionBytes.stream().mapToInt(Integer::intValue).sum());
        for (Output o : List.of(load, count, listed, setOne, resumedCheck)) {
            assertThat(o.result().has("structuredContent"))
                    .as("structuredContent in %s", o.printed())
                    .isFalse();
            int wrapper = o.printedBytes() - JSON.writeValueAsString(o.text()).getBytes(StandardCharsets.UTF_8).length;
            assertThat(wrapper)
                    .as("bytes around the reply's text in %s", o.printed())
                    .isLessThanOrEqualTo(60);
        }
        assertThat(load.printedBytes())
                .as("the load's result in front of the model")
                .isLessThanOrEqualTo(400);
        assertThat(listed.printedBytes())
                .as("the listing in front of the model")
                .isLessThanOrEqualTo(800);
        assertThat(setOne.printedBytes())
                .as("a step's result in front of the model")
                .isLessThanOrEqualTo(200);

        // the resumed session has every variable, the one set just before the stop included
        assertThat(resumedList.result().path("isError").asBoolean())
                .as(resumedList.printed())
                .isFalse();
        Set<String> expected = new LinkedHashSet<>(before);
        expected.add("server_errors");
        assertThat(names(resumedList.text()))
                .as(
                        "variables of the resumed session, every one listed before the "
                                + "stop and the one set by the last step before it (%s)",
                        resumedList.text())
                .containsAll(expected);
        JsonNode result = resumedCheck.result();
        assertThat(result.path("isError").asBoolean())
                .as(resumedCheck.printed())
                .isFalse();
        JsonNode reply =
                JSON.readTree(result.path("content").path(0).path("text").asText());
        JsonNode checked = JSON.readTree(reply.path("stdout").asText());
        assertThat(checked.path("lines").asLong()).isEqualTo(webLog.lines());
        assertThat(checked.path("server_errors").asLong()).isEqualTo(webLog.serverErrors());
        assertThat(longs(checked.path("status"))).isEqualTo(new TreeMap<>(webLog.status()));
    }

    private static Map<String, Long> longs(JsonNode object) {
        return JSON.convertValue(object, new TypeReference<TreeMap<String, Long>>() {});
    }

    /** The variable names of an rlm_list_vars table (first column, under the header). */
    private static Set<String> names(String table) {
        Set<String> names = new LinkedHashSet<>();
        table.lines()
                .skip(1)
                .map(l -> l.split(" \\| ", 2)[0].trim())
                .filter(n -> n.matches("[A-Za-z_]\\w*"))
                .forEach(names::add);
        return names;
    }
}

package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.AgentCli;
import dev.rlmmcp.e2e.support.AgentCli.Kind;
import dev.rlmmcp.e2e.support.CliProcess;
import dev.rlmmcp.e2e.support.ClosedAfterEach;
import dev.rlmmcp.e2e.support.Journey;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import dev.rlmmcp.e2e.support.ToolCallingModel;
import dev.rlmmcp.e2e.support.ToolCallingModel.Call;
import dev.rlmmcp.e2e.support.ToolCallingModel.Say;
import dev.rlmmcp.e2e.support.WebLog;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Gemini CLI, Qwen Code and opencode (pinned in e2e's lock file), each registered by its README snippet over
 * stdio and over HTTP and run headless with a scripted model of its own wire format ({@link ToolCallingModel}:
 * the Gemini API, chat completions), on the task CodexIT and ClaudeCodeIT give Codex and Claude Code: a 20 MB
 * access log several directories deep is loaded as lines, counted by status and method, the variables listed
 * and one more set; the client ends, and with it the stdio server and its kernels; a second client process
 * finds the session by the id the first reply named, lists its variables and checks every one. Every call carries whatever the client added to
 * the tool's schema (Gemini CLI's {@code wait_for_previous}).
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class AgentClisIT {

    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(150);
    private static final String LOG_PATH = "srv/www/shop/logs/2026/11/access.log";
    private static final Pattern SESSION = Pattern.compile("session (s-[0-9a-f]+)");
    private static final Pattern ANSWER = Pattern.compile("ANSWER (s-[0-9a-f]+) (.*)");
    /** As CodexIT's and ClaudeCodeIT's count, printed as words (a model's conversation escapes JSON). */
    private static final String COUNT = """
            from collections import Counter
            status, methods = Counter(), Counter()
            for line in log:
                request, rest = line.split('"')[1:3]
                methods[request.split()[0]] += 1
                status[rest.split()[0]] += 1
            words = lambda c: ",".join(f"{k}:{v}" for k, v in sorted(c.items()))
            print(f"counted lines={len(log)} status={words(status)} methods={words(methods)}")""";

    private static final String SET_ONE_MORE =
            "server_errors = sum(n for code, n in status.items() if code.startswith('5'))";
    private static final String CHECK = """
            codes = ",".join(f"{k}:{v}" for k, v in sorted(status.items()))
            print(f"checked lines={len(log)} server_errors={server_errors} status={codes}")""";

    @TempDir
    static Path shared;

    private static Path dataRoot;
    private static WebLog webLog;
    private static ServerProcess http;
    private static final Map<String, Set<String>> OWN = new HashMap<>();

    @TempDir
    Path tmp;

    @RegisterExtension
    final ClosedAfterEach open = new ClosedAfterEach();

    @BeforeAll
    static void start() throws Exception {
        dataRoot = Journey.dirs(shared, "data");
        webLog = WebLog.write(dataRoot.resolve(LOG_PATH), 20L << 20);
        http = ServerProcess.http("--data-root", dataRoot.toString());
        try (McpDriver lister = McpDriver.http(http.mcpUrl())) {
            JsonNode tools = lister.request(McpDriver.MAPPER.createObjectNode().put("op", "list_tools"))
                    .path("result")
                    .path("tools");
            for (JsonNode tool : tools) {
                Set<String> names = new HashSet<>();
                tool.path("inputSchema").path("properties").fieldNames().forEachRemaining(names::add);
                OWN.put(tool.path("name").asText(), names);
            }
        }
    }

    @AfterAll
    static void stop() {
        if (http != null) {
            http.close();
        }
    }

    static Stream<Arguments> clients() {
        return Stream.of(Kind.values())
                .flatMap(kind -> Stream.of(Arguments.of(kind, "stdio"), Arguments.of(kind, "http")));
    }

    @ParameterizedTest(name = "{0} over {1}")
    @MethodSource("clients")
    void loadsCountsAndResumesInASecondProcess(Kind kind, String transport) throws Exception {
        ToolCallingModel model = open.add(ToolCallingModel.start(OWN));
        boolean stdio = transport.equals("stdio");
        String registration = AgentCli.readmeSnippet(kind, stdio ? 0 : 1)
                .replace("/path/to/rlm-mcp", McpDriver.projectRoot().toString())
                .replace("/path/to/your/data", dataRoot.toString())
                .replace("http://127.0.0.1:8765/mcp", http.mcpUrl());
        AgentCli cli = new AgentCli(kind, tmp.resolve("home"), tmp.resolve("work"), model, registration);
        try {
            model.then(new Call("rlm_load_file", Map.of("path", LOG_PATH, "name", "log", "data_type", "lines")))
                    .then(new Call("rlm_execute", Map.of("code", COUNT)))
                    .then(new Call("rlm_list_vars", Map.of()))
                    .then(new Call("rlm_execute", Map.of("code", SET_ONE_MORE)))
                    .then(conversation -> new Say("ANSWER "
                            + found(conversation, SESSION.pattern()).substring("session ".length()) + " "
                            + found(conversation, "counted lines=\\d+ status=[0-9:,]+ methods=[A-Z:0-9,]+")));
            CliProcess.Run first = cli.run(
                    "Load " + LOG_PATH + " as lines, count its status codes and methods, then set server_errors.",
                    RUN_TIMEOUT);
            assertThat(first.exit()).as("%s\n%s", kind.title, first).isZero();
            Matcher answer = ANSWER.matcher(first.stdout());
            assertThat(answer.find()).as("the answer in\n%s", first).isTrue();
            String session = answer.group(1);
            assertThat(answer.group(2).strip())
                    .isEqualTo("counted lines=" + webLog.lines() + " status=" + words(webLog.status()) + " methods="
                            + words(webLog.methods()));
            if (stdio) {
                assertGone(first);
            }

            model.then(conversation -> new Call("rlm_list_vars", Map.of("session_id", sessionIn(conversation))))
                    .then(conversation ->
                            new Call("rlm_execute", Map.of("code", CHECK, "session_id", sessionIn(conversation))))
                    .then(conversation -> new Say("ANSWER " + session + " "
                            + found(conversation, "checked lines=\\d+ server_errors=\\d+ status=[0-9:,]+")));
            CliProcess.Run second =
                    cli.run("In session " + session + ", check that every variable is there.", RUN_TIMEOUT);
            assertThat(second.exit()).as("%s\n%s", kind.title, second).isZero();
            assertThat(second.stdout())
                    .contains("ANSWER " + session + " checked lines=" + webLog.lines() + " server_errors="
                            + webLog.serverErrors() + " status=" + words(webLog.status()));
            if (stdio) {
                assertGone(second);
            }

            assertThat(model.failures()).isEmpty();
            assertThat(model.mentioned("rlm_solve"))
                    .as("rlm_solve offered to a client that does not sample, on a server with no model API")
                    .isFalse();
            assertThat(model.turnsLeft()).isZero();
            List<ToolCallingModel.Sent> sent = model.sent();
            assertThat(sent).hasSize(6);
            if (kind == Kind.GEMINI) {
                assertThat(sent)
                        .allSatisfy(call -> assertThat(
                                        call.args().path("wait_for_previous").asBoolean())
                                .as("Gemini CLI's own argument, sent with %s", call)
                                .isTrue());
            }
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError(
                    e.getMessage() + "\n\nthe scripted model's failures: " + model.failures() + "\nrequests: "
                            + model.paths() + "\ncalls sent: " + model.sent(),
                    e);
        }
    }

    private static String words(Map<String, Long> counts) {
        return new TreeMap<>(counts)
                .entrySet().stream().map(e -> e.getKey() + ":" + e.getValue()).collect(Collectors.joining(","));
    }

    private static String found(String conversation, String regex) {
        Matcher m = Pattern.compile(regex).matcher(conversation);
        if (!m.find()) {
            throw new AssertionError("no " + regex + " in the conversation");
        }
        return m.group();
    }

    private static String sessionIn(String conversation) {
        Matcher m = Pattern.compile("s-[0-9a-f]{10,}").matcher(conversation);
        if (!m.find()) {
            throw new AssertionError("no session id in the conversation");
        }
        return m.group();
    }

    /** Every process the client started (the stdio server, its kernels) is gone soon after it ended. */
    private static void assertGone(CliProcess.Run run) throws InterruptedException {
        assertThat(run.started()).as("processes the client started").isNotEmpty();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (run.started().stream().anyMatch(ProcessHandle::isAlive) && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertThat(run.started().stream()
                        .filter(ProcessHandle::isAlive)
                        .map(p -> p.pid() + " " + p.info().commandLine().orElse("?"))
                        .toList())
                .as("processes the client started, alive after it ended")
                .isEmpty();
    }
}

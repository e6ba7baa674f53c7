package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A stdio server's start as an agent client sees it: initialize and the lists are answered while the rest
 * of the server (the Python check, the sandbox, the state store) is still starting, the same bytes the
 * started server answers, and the calls sent meanwhile are answered once it is ready.
 */
class StdioStartIT {

    private static final String REVISION_META = """
            "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}""";

    /** What an agent client sends first, in every revision: initialize (of {@code version}), the lists, ping. */
    private static List<String> firstRequests(String version) {
        return List.of(
                """
                {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"start","version":"1"}}}""".formatted(version),
                """
                {"jsonrpc":"2.0","method":"notifications/initialized"}""",
                """
                {"jsonrpc":"2.0","id":"tools \\"two\\"","method":"tools/list"}""",
                """
                {"jsonrpc":"2.0","id":3,"method":"prompts/list","params":{}}""",
                """
                {"jsonrpc":"2.0","id":4,"method":"ping"}""",
                """
                {"jsonrpc":"2.0","id":5,"method":"server/discover","params":{%s}}""".formatted(REVISION_META),
                """
                {"jsonrpc":"2.0","id":6,"method":"tools/list","params":{%s}}""".formatted(REVISION_META),
                """
                {"jsonrpc":"2.0","id":7,"method":"prompts/list","params":{%s}}""".formatted(REVISION_META));
    }

    /** A server process started as an agent client starts it, its answers read as raw lines with their arrival times. */
    private static final class Started implements AutoCloseable {

        final Process process;
        final long startedNanos = System.nanoTime();
        final Map<String, String> lines = new ConcurrentHashMap<>();
        final Map<String, Long> millis = new ConcurrentHashMap<>();
        final StringBuffer stderr = new StringBuffer();
        private final OutputStream stdin;

        Started(Path cache, List<String> args) throws IOException {
            this(Map.of("XDG_CACHE_HOME", cache.toString()), args);
        }

        Started(Map<String, String> env, List<String> args) throws IOException {
            ProcessBuilder builder = new ProcessBuilder(ServerProcess.command(args, false));
            builder.environment().putAll(env);
            process = builder.start();
            stdin = process.getOutputStream();
            Thread.ofPlatform().daemon().start(() -> {
                try (BufferedReader r =
                        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        String id = McpDriver.MAPPER.readTree(line).path("id").asText();
                        millis.put(id, (System.nanoTime() - startedNanos) / 1_000_000);
                        lines.put(id, line);
                    }
                } catch (IOException ignored) {
                    // gone
                }
            });
            Thread.ofPlatform().daemon().start(() -> {
                try (BufferedReader r =
                        new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        stderr.append(line).append('\n');
                    }
                } catch (IOException ignored) {
                    // gone
                }
            });
        }

        void send(List<String> requests) throws IOException {
            stdin.write((String.join("\n", requests) + "\n").getBytes(StandardCharsets.UTF_8));
            stdin.flush();
        }

        /** Waits for answers to these ids (each as JSON text), at most a minute. */
        void await(String... ids) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
            while (!lines.keySet().containsAll(List.of(ids)) && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(lines).as("answers; stderr:\n" + stderr).containsKeys(ids);
        }

        /** Closes stdin and waits for the exit code. */
        int finish() throws IOException, InterruptedException {
            stdin.close();
            assertThat(process.waitFor(60, TimeUnit.SECONDS))
                    .as("exits after stdin closes")
                    .isTrue();
            return process.exitValue();
        }

        @Override
        public void close() {
            process.destroyForcibly();
        }
    }

    private static final String[] FIRST_IDS = {"1", "tools \"two\"", "3", "4", "5", "6", "7"};

    private static Map<String, String> firstAnswers(Path cache, Path state, String version) throws Exception {
        try (Started server = new Started(cache, List.of("stdio", "--state-dir", state.toString()))) {
            server.send(firstRequests(version));
            server.await(FIRST_IDS);
            assertThat(server.finish()).isZero();
            assertThat(server.stderr.toString())
                    .as("the server found no early answer that differs from its own")
                    .doesNotContain("differs");
            Map<String, String> answers = new LinkedHashMap<>();
            for (String id : FIRST_IDS) {
                answers.put(id, server.lines.get(id));
            }
            answers.put("stderr", server.stderr.toString());
            return answers;
        }
    }

    @Test
    void theStartUpAnswersAreTheStartedServersOwnByteForByteInEveryRevision(@TempDir Path dir) throws Exception {
        Path cache = dir.resolve("cache");
        Path state = Files.createDirectories(dir.resolve("state"));
        // every version the server speaks before 2026-07-28, and one it does not (answered with its latest)
        for (String version : List.of("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "1999-01-01")) {
            // the first start with this version: its initialize is made by the start or answered by the started
            // server (1999-01-01), which keeps it
            Map<String, String> server = firstAnswers(cache, state, version);
            if (version.equals("2024-11-05")) {
                // a configuration's first start: initialize and the lists made from its tools, checked by its server
                assertThat(server.get("stderr")).as(version).contains("answered 3 requests");
            }
            // the next: every first request answered by the front, from what the earlier starts kept
            Map<String, String> front = firstAnswers(cache, state, version);
            assertThat(front.get("stderr")).as(version).contains("answered 7 requests");
            for (String id : FIRST_IDS) {
                assertThat(front.get(id)).as(version + ", id " + id).isEqualTo(server.get(id));
            }
            assertThat(JsonNodes.of(front.get("1"))
                            .path("result")
                            .path("protocolVersion")
                            .asText())
                    .isEqualTo(version.equals("1999-01-01") ? "2025-11-25" : version);
        }
        assertThat(JsonNodes.of(firstAnswers(cache, state, "2025-06-18").get(FIRST_IDS[1]))
                        .path("result")
                        .path("tools"))
                .hasSize(18);
    }

    /**
     * Kept answers the server would no longer give (a change the file's name did not capture): given at start-up
     * once, found different by the server, logged, and replaced, so that the next start answers as the server does.
     */
    @Test
    void aKeptAnswerThatNoLongerHoldsIsReplacedForTheNextStart(@TempDir Path dir) throws Exception {
        Path cache = dir.resolve("cache");
        Path state = Files.createDirectories(dir.resolve("state"));
        Map<String, String> server = firstAnswers(cache, state, "2025-06-18");
        List<Path> kept;
        try (var files = Files.list(cache.resolve("rlm-mcp/startup"))) {
            kept = files.toList();
        }
        assertThat(kept).hasSize(1);
        Files.writeString(
                kept.get(0),
                Files.readString(kept.get(0)).replace("Python source to execute.", "an outdated description"));
        try (Started stale = new Started(cache, List.of("stdio", "--state-dir", state.toString()))) {
            stale.send(firstRequests("2025-06-18"));
            stale.await(FIRST_IDS);
            assertThat(stale.lines.get(FIRST_IDS[1])).contains("an outdated description");
            assertThat(stale.finish()).isZero();
            assertThat(stale.stderr.toString()).contains("differs from this server's");
        }
        Map<String, String> next = firstAnswers(cache, state, "2025-06-18");
        assertThat(next.get("stderr")).contains("answered 7 requests");
        for (String id : FIRST_IDS) {
            assertThat(next.get(id)).as("id " + id).isEqualTo(server.get(id));
        }
    }

    /**
     * Claude Code rewrites ~/.claude.json at every start: the kept answers still hold while the MCP servers it
     * defines (which run_python's description names) stay the same, and no longer once one is added.
     */
    @Test
    void aClientRewritingItsConfigKeepsTheAnswersUntilItsServersChange(@TempDir Path dir) throws Exception {
        Path home = Files.createDirectories(dir.resolve("home"));
        Path config = home.resolve(".claude.json");
        Map<String, String> env = Map.of(
                "HOME", home.toString(), "XDG_CACHE_HOME", dir.resolve("cache").toString());
        List<String> args = List.of(
                "stdio",
                "--state-dir",
                Files.createDirectories(dir.resolve("state")).toString());
        List<String> stderr = new ArrayList<>();
        for (String written : List.of("""
                {"numStartups": 1, "mcpServers": {"rlm": {"command": "rlm-mcp"}}}""", """
                {"numStartups": 2, "tipsHistory": {"x": 3}, "mcpServers": {"rlm": {"command": "rlm-mcp"}}}""", """
                {"numStartups": 3, "mcpServers": {"rlm": {"command": "rlm-mcp"}, "notes": {"command": "notes"}}}""")) {
            Files.writeString(config, written);
            try (Started server = new Started(env, args)) {
                server.send(firstRequests("2025-06-18"));
                server.await(FIRST_IDS);
                assertThat(server.finish()).isZero();
                stderr.add(server.stderr.toString());
            }
        }
        assertThat(stderr.get(1))
                .as("the config rewritten, its servers the same")
                .contains("answered 7 requests");
        assertThat(stderr.get(2)).as("a server added to the config").doesNotContain("answered 7 requests");
    }

    @Test
    void theToolsAreListedWhileTheServerStartsAndACallSentMeanwhileIsAnsweredOnceItIsReady(@TempDir Path dir)
            throws Exception {
        // a Python whose first start (the server's check) takes 6 s
        Path python = dir.resolve("slow-python");
        String real = new ProcessBuilder("sh", "-c", "command -v python3")
                .start()
                .inputReader()
                .readLine();
        Files.writeString(python, "#!/bin/sh\nsleep 6\nexec " + real + " \"$@\"\n");
        Files.setPosixFilePermissions(python, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path cache = dir.resolve("cache");
        List<String> args = List.of(
                "stdio",
                "--python",
                python.toString(),
                "--state-dir",
                Files.createDirectories(dir.resolve("state")).toString());
        for (String start : List.of("first start (answers from the SDK)", "second start (answers from the front)")) {
            try (Started server = new Started(cache, args)) {
                List<String> requests = new ArrayList<>(firstRequests("2025-06-18"));
                requests.add("""
                        {"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"rlm_execute","arguments":{"code":"6 * 7"}}}""");
                server.send(requests);
                server.await(FIRST_IDS);
                server.await("8");
                assertThat(JsonNodes.of(server.lines.get("8"))
                                .path("result")
                                .path("content")
                                .path(0)
                                .path("text")
                                .asText())
                        .as(start)
                        .startsWith("42\n");
                assertThat(server.millis.get("tools \"two\""))
                        .as(
                                start
                                        + ": tools/list (answered at %d ms) well before the call (at %d ms), which waits for the "
                                        + "slow Python check",
                                server.millis.get("tools \"two\""),
                                server.millis.get("8"))
                        .isLessThan(server.millis.get("8") - 3000);
                assertThat(JsonNodes.of(server.lines.get("tools \"two\""))
                                .path("result")
                                .path("tools"))
                        .hasSize(18);
                assertThat(server.finish()).isZero();
            }
        }
    }

    @Test
    void everyRequestIsAnsweredWhetherOrNotTheClientSentTheInitializedNotification(@TempDir Path dir) throws Exception {
        List<String> args = List.of("stdio", "--state-dir", dir.toString());
        try (Started server = new Started(dir.resolve("cache"), args)) {
            server.send(List.of("""
                    {"jsonrpc":"2.0","id":"early ping","method":"ping"}""", """
                    {"jsonrpc":"2.0","id":"too early","method":"tools/list"}"""));
            server.await("early ping", "too early");
            assertThat(JsonNodes.of(server.lines.get("early ping"))
                            .path("result")
                            .isObject())
                    .isTrue();
            assertThat(JsonNodes.of(server.lines.get("too early"))
                            .path("error")
                            .path("message")
                            .asText())
                    .contains("send initialize first", "notifications/initialized");

            // initialize answered, then requests with no notifications/initialized between
            server.send(List.of(firstRequests("2025-11-25").getFirst()));
            server.await("1");
            server.send(List.of("""
                    {"jsonrpc":"2.0","id":"listed","method":"tools/list"}""", """
                    {"jsonrpc":"2.0","id":"ran","method":"tools/call","params":{"name":"rlm_execute","arguments":{"code":"6 * 7"}}}"""));
            server.await("listed", "ran");
            assertThat(JsonNodes.of(server.lines.get("listed")).path("result").path("tools"))
                    .hasSize(18);
            assertThat(JsonNodes.of(server.lines.get("ran"))
                            .path("result")
                            .path("content")
                            .path(0)
                            .path("text")
                            .asText())
                    .startsWith("42\n");
            server.send(List.of(firstRequests("2025-11-25").get(1))); // a late notification changes nothing
            server.send(List.of("""
                    {"jsonrpc":"2.0","id":"after","method":"ping"}"""));
            server.await("after");
            assertThat(server.finish()).isZero();
        }
    }

    /** JSON text as a tree. */
    private static final class JsonNodes {
        static JsonNode of(String json) throws IOException {
            return McpDriver.MAPPER.readTree(json);
        }
    }
}

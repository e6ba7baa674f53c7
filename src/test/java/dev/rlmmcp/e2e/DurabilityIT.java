package dev.rlmmcp.e2e;

import static dev.rlmmcp.e2e.support.McpDriver.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.e2e.support.ClosedAfterEach;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import dev.rlmmcp.e2e.support.SessionCalls;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Nothing a step did is lost to a graceful stop, and no more than the snapshot window to a kill: the
 * real server with its default sandbox (bubblewrap where it works), stopped and restarted on the
 * same --state-dir, and its kernels killed from the host.
 */
class DurabilityIT {

    @TempDir
    Path state;

    @TempDir
    Path data;

    @RegisterExtension
    final ClosedAfterEach open = new ClosedAfterEach();

    private McpDriver client;
    private SessionCalls calls;

    private ServerProcess start(String... extra) throws IOException {
        List<String> args = new ArrayList<>(List.of("--state-dir", state.toString(), "--data-root", data.toString()));
        args.addAll(List.of(extra));
        ServerProcess server = ServerProcess.http(args.toArray(String[]::new));
        open.add(server);
        client = McpDriver.http(server.mcpUrl());
        calls = new SessionCalls(client);
        open.add(client);
        return server;
    }

    private String newSession() {
        return calls.ok("rlm_init_context", Map.of()).path("session_id").asText();
    }

    @Test
    void sigtermRightAfterAStepThenRestartFindsEveryVariable() throws Exception {
        // a debounce far beyond the test: only the shutdown can have saved the last step
        ServerProcess server = start("--snapshot-debounce-ms", "600000");
        String id = newSession();
        calls.run(id, "first = list(range(10))");
        calls.run(id, "last = {'k': 'v'}\nfirst.append(10)");
        assertThat(server.terminate()).isIn(0, 143);
        assertThat(server.log()).doesNotContain("died writing its snapshot").doesNotContain("not saved at shutdown");

        start();
        assertThat(calls.run(id, "print(len(first), last)")).isEqualTo("11 {'k': 'v'}\n");
    }

    @Test
    void aFiftyMegabyteLoadThenAnImmediateSigtermIsKept() throws Exception {
        Files.writeString(data.resolve("big.txt"), "0123456789abcdef\n".repeat(50_000_000 / 17));
        // readable by the sandboxed kernel's uid
        Files.setPosixFilePermissions(data, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setPosixFilePermissions(data.resolve("big.txt"), PosixFilePermissions.fromString("rw-r--r--"));
        ServerProcess server = start("--snapshot-debounce-ms", "600000");
        String id = newSession();
        calls.ok("rlm_load_file", Map.of("session_id", id, "name", "big", "path", "big.txt"));
        assertThat(server.terminate()).isIn(0, 143);
        assertThat(server.log()).doesNotContain("died writing its snapshot").doesNotContain("not saved at shutdown");

        start();
        assertThat(calls.run(id, "print(len(big), big[:4])")).isEqualTo((50_000_000 / 17 * 17) + " 0123\n");
    }

    @Test
    void stdinClosedRightAfterAStepThenRestartFindsEveryVariable() throws Exception {
        String id;
        try (RawStdio server = new RawStdio(state, "--snapshot-debounce-ms", "600000")) {
            id = server.tool("rlm_init_context", Map.of()).path("session_id").asText();
            server.tool("rlm_run_repl", Map.of("session_id", id, "code", "kept = 'x' * 1000\ncount = 3"));
            assertThat(server.closeStdin()).isZero();
            assertThat(server.log())
                    .doesNotContain("died writing its snapshot")
                    .doesNotContain("not saved at shutdown");
        }
        try (RawStdio server = new RawStdio(state)) {
            JsonNode reply = server.tool("rlm_run_repl", Map.of("session_id", id, "code", "print(len(kept), count)"));
            assertThat(reply.path("stdout").asText()).as(reply.toString()).isEqualTo("1000 3\n");
        }
    }

    @Test
    void withDurableRepliesAStepsChangesSurviveAKillMinus9RightAfterItsReply() throws Exception {
        ServerProcess server = start("--snapshot-debounce-ms", "600000", "--durable-replies");
        String id = newSession();
        calls.run(id, "answer = {'value': 42}");
        server.kill();

        start();
        assertThat(calls.run(id, "print(answer)")).isEqualTo("{'value': 42}\n");
    }

    @Test
    void stepsEveryHalfSecondThatChangeNothingDoNotHoldBackTheSnapshot() throws Exception {
        ServerProcess server = start("--snapshot-debounce-ms", "1000");
        String id = newSession();
        calls.run(id, "early = [1, 2, 3]");
        for (int i = 0; i < 10; i++) {
            calls.ok("rlm_list_vars", Map.of("session_id", id));
            calls.run(id, "print(len(early))");
            Thread.sleep(500);
        }
        server.kill();

        start();
        assertThat(calls.run(id, "print(early)")).isEqualTo("[1, 2, 3]\n");
    }

    @Test
    void aKernelKilledFromTheHostBetweenCallsIsReplacedAndTheNextCallRuns() throws Exception {
        ServerProcess server = start("--snapshot-debounce-ms", "600000");
        String id = newSession();
        calls.run(id, "kept = list(range(5))");
        // a generator cannot be snapshotted: only the kernel holds it
        calls.run(id, "late = (i for i in range(3))");
        killKernels(server);

        JsonNode next = calls.ok("rlm_run_repl", Map.of("session_id", id, "code", "print(kept)"));
        assertThat(next.path("stdout").asText()).isEqualTo("[0, 1, 2, 3, 4]\n");
        assertThat(names(next.path("lost_variables"))).containsExactly("late");
        assertThat(next.path("kernel_restarted").path("message").asText()).contains("died since the last call");
        JsonNode after = json(client.call("rlm_run_repl", Map.of("session_id", id, "code", "late")));
        assertThat(after.path("error").path("type").asText()).isEqualTo("NameError");
    }

    @Test
    void aKernelKilledMidStepComesBackWithTheEarlierSteps() throws Exception {
        ServerProcess server = start("--snapshot-debounce-ms", "600000");
        String id = newSession();
        calls.run(id, "before = 'set by an earlier step'");
        CompletableFuture<JsonNode> running = client.callAsync(
                "rlm_execute",
                Map.of("session_id", id, "code", "import time\nduring = 1\ntime.sleep(60)", "timeout_s", 120),
                false);
        Thread.sleep(1500);
        killKernels(server);
        JsonNode crashed = json(running.get(60, TimeUnit.SECONDS).path("result"));
        assertThat(crashed.path("status").asText()).as(crashed.toString()).isEqualTo("crashed");
        assertThat(crashed.path("lost_variables")).isEmpty();

        assertThat(calls.run(id, "print(before)")).isEqualTo("set by an earlier step\n");
    }

    @Test
    void aKernelKilledAfterIgnoringItsInterruptComesBackWithTheEarlierSteps() throws Exception {
        start("--snapshot-debounce-ms", "600000", "--interrupt-grace-ms", "500");
        String id = newSession();
        calls.run(id, "before = 'set by an earlier step'");
        JsonNode killed = json(client.call("rlm_execute", Map.of("session_id", id, "timeout_s", 1, "code", """
                import signal
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                while True:
                    pass
                """)));
        assertThat(killed.path("status").asText()).as(killed.toString()).isEqualTo("killed");
        assertThat(killed.path("lost_variables")).isEmpty();

        assertThat(calls.run(id, "print(before)")).isEqualTo("set by an earlier step\n");
    }

    /** SIGKILL to every kernel (the Python process running the harness) of the server, from the host. */
    private static void killKernels(ServerProcess server) throws Exception {
        List<ProcessHandle> kernels = ProcessHandle.of(server.pid())
                .orElseThrow()
                .descendants()
                .filter(p -> p.info().commandLine().orElse("").matches(".*/harness(-[0-9a-f]+)? .*"))
                .toList();
        assertThat(kernels).as("the server's kernels").isNotEmpty();
        for (ProcessHandle kernel : kernels) {
            kernel.destroyForcibly();
            kernel.onExit().get(10, TimeUnit.SECONDS);
        }
    }

    private static List<String> names(JsonNode array) {
        List<String> names = new ArrayList<>();
        array.forEach(n -> names.add(n.asText()));
        return names;
    }

    /** The server in stdio mode, spoken to line by line, so that the test decides when stdin ends. */
    private static final class RawStdio implements AutoCloseable {

        private final Process process;
        private final OutputStream in;
        private final BufferedReader out;
        private final StringBuffer log = new StringBuffer();
        private int ids;

        RawStdio(Path state, String... extra) throws IOException {
            List<String> args = new ArrayList<>(List.of("stdio", "--state-dir", state.toString()));
            args.addAll(List.of(extra));
            process = new ProcessBuilder(ServerProcess.command(args)).start();
            in = process.getOutputStream();
            out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            Thread.ofPlatform().daemon().start(() -> {
                try (BufferedReader err =
                        new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = err.readLine()) != null) {
                        log.append(line).append('\n');
                    }
                } catch (IOException ignored) {
                    // the server has gone
                }
            });
            request(
                    "initialize",
                    Map.of(
                            "protocolVersion",
                            "2025-06-18",
                            "capabilities",
                            Map.of(),
                            "clientInfo",
                            Map.of("name", "durability-it", "version", "1")));
            send(McpDriver.MAPPER.createObjectNode().put("jsonrpc", "2.0").put("method", "notifications/initialized"));
        }

        JsonNode tool(String name, Map<String, ?> arguments) throws IOException {
            Map<String, Object> json = new java.util.HashMap<>(arguments);
            json.putIfAbsent("response_format", "json");
            JsonNode result = request("tools/call", Map.of("name", name, "arguments", json));
            JsonNode reply = McpDriver.MAPPER.readTree(
                    result.path("content").get(0).path("text").asText());
            assertThat(result.path("isError").asBoolean()).as(reply.toString()).isFalse();
            return reply;
        }

        private JsonNode request(String method, Map<String, ?> params) throws IOException {
            int id = ++ids;
            ObjectNode message = McpDriver.MAPPER
                    .createObjectNode()
                    .put("jsonrpc", "2.0")
                    .put("id", id)
                    .put("method", method);
            message.set("params", McpDriver.MAPPER.valueToTree(params));
            send(message);
            String line;
            while ((line = out.readLine()) != null) {
                JsonNode reply = McpDriver.MAPPER.readTree(line);
                if (reply.path("id").asInt(-1) == id) {
                    assertThat(reply.has("error")).as(reply.toString()).isFalse();
                    return reply.path("result");
                }
            }
            throw new IllegalStateException("the server closed stdout:\n" + log);
        }

        private void send(ObjectNode message) throws IOException {
            in.write(McpDriver.MAPPER.writeValueAsBytes(message));
            in.write('\n');
            in.flush();
        }

        /** Ends stdin, as a client that goes away does, and returns the server's exit code. */
        int closeStdin() throws Exception {
            in.close();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the server did not stop after stdin closed:\n" + log);
            }
            return process.exitValue();
        }

        String log() {
            return log.toString();
        }

        @Override
        public void close() throws Exception {
            if (process.isAlive()) {
                closeStdin();
            }
        }
    }
}

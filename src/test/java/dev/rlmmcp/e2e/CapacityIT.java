package dev.rlmmcp.e2e;

import static dev.rlmmcp.e2e.support.McpDriver.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.ClosedAfterEach;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import dev.rlmmcp.e2e.support.SessionCalls;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * One session cannot take another's kernel from it, under the default sandbox (bwrap): processes are
 * counted per kernel, not per uid, and the server's budget for kernels (--max-kernels,
 * --max-total-memory-mb) stops idle kernels after a snapshot, never running ones, and otherwise
 * refuses with CAPACITY.
 */
class CapacityIT {

    /** Starts up to n threads that stay alive until {@code _stop} is set; prints how many started. */
    private static final String THREADS = """
            import threading
            _stop = threading.Event()
            _started = 0
            try:
                for _ in range(%d):
                    threading.Thread(target=_stop.wait, daemon=True).start()
                    _started += 1
            except RuntimeError as e:
                print('stopped:', e)
            print(_started)
            """;

    @TempDir
    Path state;

    @RegisterExtension
    final ClosedAfterEach open = new ClosedAfterEach();

    @BeforeAll
    static void bwrapIsHere() {
        assumeTrue(
                Files.isExecutable(Path.of("/usr/bin/bwrap")),
                "bubblewrap is not installed: the default sandbox is not bwrap here");
    }

    private ServerProcess server(String... extra) throws IOException {
        List<String> args = new ArrayList<>(
                List.of("--state-dir", state.toString(), "--snapshot-debounce-ms", "100", "--mcp-discovery", "false"));
        args.addAll(List.of(extra));
        ServerProcess server = ServerProcess.http(Map.of("RLM_SANDBOX", "auto"), args.toArray(String[]::new));
        open.add(server);
        return server;
    }

    private McpDriver client(ServerProcess server) {
        McpDriver client = McpDriver.http(server.mcpUrl());
        open.add(client);
        return client;
    }

    @Test
    void aSessionWithThreeHundredThreadsLeavesRoomForNewSessions() throws Exception {
        ServerProcess server = server();
        SessionCalls calls = new SessionCalls(client(server));
        assertThat(health(server).path("sandbox").asText()).isEqualTo("bwrap");
        String greedy = newSession(calls);
        String[] out = calls.run(greedy, THREADS.formatted(300)).strip().split("\n");
        int started = Integer.parseInt(out[out.length - 1]);
        // its own limit (256 processes per kernel) may stop it short of 300, never anyone else's
        assertThat(started).as(String.join("\n", out)).isGreaterThanOrEqualTo(240);

        for (int i = 0; i < 5; i++) {
            String id = newSession(calls);
            assertThat(calls.run(id, "print(6 * 7)")).isEqualTo("42\n");
        }
        assertThat(calls.run(greedy, "print(threading.active_count() >= _started)"))
                .isEqualTo("True\n");
        calls.run(greedy, "_stop.set()");
        assertThat(health(server).path("capacity").path("kernels_running").asInt())
                .isEqualTo(6);
    }

    @Test
    void withMaxKernelsThreeAFourthSessionStopsTheIdlestAndWhenAllAreBusyIsRefusedWithTheFix() throws Exception {
        ServerProcess server = server("--max-kernels", "3");
        McpDriver client = client(server);
        SessionCalls calls = new SessionCalls(client);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            ids.add(newSession(calls));
            calls.run(ids.get(i), "v = 'value of session %d'\ndef f():\n    return %d".formatted(i, i));
        }
        String fourth = newSession(calls);
        assertThat(calls.run(fourth, "print('fourth')")).isEqualTo("fourth\n");
        assertThat(calls.session(ids.get(0)).path("kernel_running").asBoolean()).isFalse();
        assertThat(calls.session(ids.get(1)).path("kernel_running").asBoolean()).isTrue();
        assertThat(calls.session(ids.get(2)).path("kernel_running").asBoolean()).isTrue();
        JsonNode health = health(server).path("capacity");
        assertThat(health.path("kernels_running").asInt()).isEqualTo(3);
        assertThat(health.path("max_kernels").asInt()).isEqualTo(3);

        // the idlest's variables come back on its next call (which stops the next idlest, session 1)
        assertThat(calls.run(ids.get(0), "print(v, f())")).isEqualTo("value of session 0 0\n");
        assertThat(calls.session(ids.get(1)).path("kernel_running").asBoolean()).isFalse();

        // three running calls: a fourth kernel is refused, and none of them is stopped
        List<McpDriver> busy = new ArrayList<>();
        List<CompletableFuture<JsonNode>> running = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            McpDriver other = client(server);
            other.call("rlm_sessions", Map.of());
            busy.add(other);
        }
        List<String> runningIds = List.of(ids.get(0), ids.get(2), fourth);
        for (int i = 0; i < 3; i++) {
            running.add(busy.get(i)
                    .callAsync(
                            "rlm_run_repl",
                            Map.of(
                                    "session_id",
                                    runningIds.get(i),
                                    "code",
                                    "import time\ntime.sleep(10)\nprint('done')"),
                            false));
        }
        Thread.sleep(2500);
        JsonNode refused = attempt(client, ids.get(1), "print(v)");
        assertThat(refused.path("isError").asBoolean()).as(refused.toString()).isTrue();
        JsonNode error = json(refused).path("error");
        assertThat(error.path("code").asText()).isEqualTo("CAPACITY");
        assertThat(error.path("message").asText()).contains("3 kernels run", "--max-kernels");
        assertThat(error.path("fix").asText()).contains("rlm_delete_session", "--max-kernels");
        for (CompletableFuture<JsonNode> call : running) {
            JsonNode line = call.get(60, TimeUnit.SECONDS);
            assertThat(json(line.path("result")).path("stdout").asText())
                    .as(line.toString())
                    .isEqualTo("done\n");
        }
        // once they are idle again, session 1 gets a kernel back, with its variables
        assertThat(calls.run(ids.get(1), "print(v, f())")).isEqualTo("value of session 1 1\n");
    }

    @Test
    void atFullCapacityTheWarmKernelsRefillInThePlaceOfASessionIdleAMinuteWhoseVariablesComeBack() throws Exception {
        ServerProcess server = server("--max-kernels", "3");
        SessionCalls calls = new SessionCalls(client(server));
        String idle = newSession(calls);
        calls.run(idle, "kept = 41");
        Thread.sleep(1000);
        String recent = newSession(calls);
        calls.run(recent, "x = 1");
        Thread.sleep(5000);
        assertThat(health(server).path("capacity").path("warm_kernels").asInt())
                .as("full: one short")
                .isEqualTo(1);
        assertThat(calls.session(idle).path("kernel_running").asBoolean()).isTrue();

        // a minute after its last call, the idlest session's kernel makes way (its variables are in its snapshot)
        for (int i = 0;
                i < 300 && health(server).path("capacity").path("warm_kernels").asInt() < 2;
                i++) {
            Thread.sleep(250);
        }
        assertThat(health(server).path("capacity").path("warm_kernels").asInt()).isEqualTo(2);
        assertThat(calls.session(idle).path("kernel_running").asBoolean()).isFalse();
        assertThat(calls.session(recent).path("kernel_running").asBoolean()).isTrue();
        assertThat(calls.run(idle, "print(kept)")).isEqualTo("41\n");
    }

    @Test
    void theMemoryBudgetStopsTheIdleKernelThatHoldsItAndRefusesWhileItRuns() throws Exception {
        ServerProcess server = server("--max-total-memory-mb", "400");
        McpDriver client = client(server);
        SessionCalls calls = new SessionCalls(client);
        String big = newSession(calls);
        // 380 MiB leaves less than a new kernel's 32 MiB under the 400 MiB budget, whatever the harness holds itself
        calls.run(big, "blob = b'x' * (380 << 20)");
        Thread.sleep(600); // a kernel's memory is measured at most twice a second
        JsonNode capacity = health(server).path("capacity");
        assertThat(capacity.path("max_memory_bytes").asLong()).isEqualTo(400L << 20);
        assertThat(capacity.path("memory_used_bytes").asLong()).isGreaterThan(380L << 20);

        calls.awaitSnapshot(big);
        String small = newSession(calls);
        // a warm kernel, already counted, fits; once it holds 20 MiB more, the kernels hold more than the
        // budget: the warm kernels go first, then the idlest session's
        assertThat(calls.run(small, "room = b'y' * (20 << 20)\nprint('room')")).isEqualTo("room\n");
        for (int i = 0; i < 100 && calls.session(big).path("kernel_running").asBoolean(); i++) {
            Thread.sleep(100);
        }
        assertThat(calls.session(big).path("kernel_running").asBoolean()).isFalse();
        assertThat(calls.session(small).path("kernel_running").asBoolean()).isTrue();
        assertThat(calls.run(big, "print(len(blob) >> 20)")).isEqualTo("380\n");

        // while the big session runs, nothing can be stopped for a third one
        McpDriver other = client(server);
        other.call("rlm_sessions", Map.of());
        CompletableFuture<JsonNode> running = other.callAsync(
                "rlm_run_repl",
                Map.of(
                        "session_id",
                        big,
                        "code",
                        "import time\nmore = b'y' * (360 << 20)\ntime.sleep(10)\nprint(len(blob) >> 20)"),
                false);
        Thread.sleep(2500);
        JsonNode refused = attempt(client, newSession(calls), "print(1)");
        JsonNode error = json(refused).path("error");
        assertThat(error.path("code").asText()).as(refused.toString()).isEqualTo("CAPACITY");
        assertThat(error.path("message").asText()).contains("--max-total-memory-mb");
        assertThat(json(running.get(60, TimeUnit.SECONDS).path("result"))
                        .path("stdout")
                        .asText())
                .isEqualTo("380\n");
    }

    @Test
    void withMaxKernelsEightSixtyFourRunPythonCallsAtOnceAllRunTheirThrowawayKernelsWaitingInLine() throws Exception {
        ServerProcess server = server("--max-kernels", "8");
        List<CompletableFuture<JsonNode>> runs = new ArrayList<>();
        for (int c = 0; c < 4; c++) {
            McpDriver client = client(server);
            for (int i = 0; i < 16; i++) {
                runs.add(client.callAsync(
                        "run_python",
                        Map.of(
                                "code",
                                "import time\ntime.sleep(1)\nprint(%d)".formatted(c * 16 + i),
                                "response_format",
                                "json"),
                        false));
            }
        }
        int most = 0;
        while (!runs.stream().allMatch(CompletableFuture::isDone)) {
            JsonNode capacity = health(server).path("capacity");
            most = Math.max(
                    most,
                    capacity.path("kernels_running").asInt()
                            + capacity.path("warm_kernels").asInt());
            Thread.sleep(100);
        }
        for (int i = 0; i < 64; i++) {
            JsonNode result = runs.get(i).get(5, TimeUnit.SECONDS).path("result");
            assertThat(json(result).path("status").asText())
                    .as(result.toString())
                    .isEqualTo("success");
            assertThat(json(result).path("stdout").path(0).asText())
                    .as(result.toString())
                    .isEqualTo(String.valueOf(i));
        }
        assertThat(most).isBetween(1, 8);
    }

    private static String newSession(SessionCalls calls) {
        return calls.ok("rlm_init_context", Map.of()).path("session_id").asText();
    }

    /** A step's result as it came, refusal or not. */
    private static JsonNode attempt(McpDriver client, String id, String code) {
        return client.call("rlm_run_repl", Map.of("session_id", id, "code", code));
    }

    private static JsonNode health(ServerProcess server) throws IOException, InterruptedException {
        return McpDriver.MAPPER.readTree(HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(server.baseUrl() + "/health"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body());
    }
}

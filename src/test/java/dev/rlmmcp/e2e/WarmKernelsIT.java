package dev.rlmmcp.e2e;

import static dev.rlmmcp.e2e.support.McpDriver.json;
import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Warm kernels as a user gets them, with the default flags (two warm kernels, the default sandbox):
 * a new session and run_python get a kernel started before they asked, which sees what a kernel
 * started for them would (fresh globals, the session's limits, its own snapshot, restored after a
 * restart), and the pool refills.
 */
class WarmKernelsIT {

    /** Seconds since the kernel's process started, as the kernel reads it. */
    private static final String AGE = """
            with open('/proc/self/stat') as _f, open('/proc/uptime') as _u:
                _s = _f.read()
                print(round(float(_u.read().split()[0]) - int(_s[_s.rindex(')') + 2:].split()[19]) / 100, 2))
            del _f, _u, _s
            """;

    private static final String GLOBALS = "print(sorted(globals()))";

    @TempDir
    Path state;

    @RegisterExtension
    final ClosedAfterEach open = new ClosedAfterEach();

    private ServerProcess server(Path stateDir, String... extra) throws IOException {
        List<String> args = new ArrayList<>(List.of("--state-dir", stateDir.toString(), "--mcp-discovery", "false"));
        args.addAll(List.of(extra));
        ServerProcess server = ServerProcess.http(args.toArray(String[]::new));
        open.add(server);
        return server;
    }

    private final Map<SessionCalls, McpDriver> clients = new HashMap<>();

    private SessionCalls calls(ServerProcess server) {
        McpDriver client = McpDriver.http(server.mcpUrl());
        open.add(client);
        SessionCalls calls = new SessionCalls(client);
        clients.put(calls, client);
        return calls;
    }

    /** The step's error type: it must have raised. */
    private String raised(SessionCalls calls, String id, String code) {
        JsonNode result = clients.get(calls).call("rlm_run_repl", Map.of("session_id", id, "code", code));
        return json(result).path("error").path("type").asText();
    }

    @Test
    void aNewSessionAndRunPythonGetKernelsStartedBeforeThemThatHoldNothingOfAnyoneElse() throws Exception {
        ServerProcess server = server(state);
        SessionCalls calls = calls(server);
        awaitWarm(server, 2);
        Thread.sleep(1000);

        String first = newSession(calls);
        assertThat(age(calls, first)).isGreaterThan(0.8);
        calls.run(first, "secret = 'first session data'\nimport json\ndef helper():\n    return secret");
        calls.ok("rlm_delete_session", Map.of("session_id", first));

        awaitWarm(server, 2);
        Thread.sleep(1000);
        String second = newSession(calls);
        assertThat(age(calls, second)).isGreaterThan(0.8);
        String globals = calls.run(second, GLOBALS);
        assertThat(globals).doesNotContain("secret", "json", "helper");

        JsonNode run = calls.ok("run_python", Map.of("code", "print(sorted(globals()))", "response_format", "json"));
        assertThat(run.path("status").asText()).as(run.toString()).isEqualTo("success");
        assertThat(run.path("stdout").asText()).doesNotContain("secret", "json", "helper");

        // what a kernel started for the session sees
        ServerProcess cold = server(state.resolve("cold"), "--warm-kernels", "0");
        SessionCalls coldCalls = calls(cold);
        String coldSession = newSession(coldCalls);
        assertThat(calls.run(second, GLOBALS)).isEqualTo(globals);
        assertThat(coldCalls.run(coldSession, GLOBALS)).isEqualTo(globals);
        assertThat(health(cold).path("capacity").path("warm_kernels").asInt()).isZero();

        awaitWarm(server, 2);
        try (Stream<Path> spares = Files.list(state.resolve("snapshots").resolve(".warm"))) {
            assertThat(spares.toList())
                    .hasSize(2)
                    .allSatisfy(spare -> assertThat(spare).isEmptyDirectory());
        }
    }

    @Test
    void aClaimedKernelKeepsTheSessionsLimitsAndSnapshotAcrossARestart() throws Exception {
        ServerProcess server = server(state, "--max-memory-mb", "64", "--snapshot-debounce-ms", "100");
        SessionCalls calls = calls(server);
        awaitWarm(server, 2);
        String id = newSession(calls);
        assertThat(raised(calls, id, "blob = b'x' * (1500 << 20)")).isEqualTo("MemoryError");
        calls.run(id, "kept = {'rows': list(range(100))}\ndef total():\n    return sum(kept['rows'])");
        calls.awaitSnapshot(id);
        assertThat(state.resolve("snapshots").resolve(id).resolve("manifest.json"))
                .exists();
        server.terminate();

        ServerProcess again = server(state, "--max-memory-mb", "64");
        SessionCalls later = calls(again);
        awaitWarm(again, 2);
        Thread.sleep(1000);
        assertThat(later.run(id, "print(total())")).isEqualTo("4950\n");
        assertThat(age(later, id)).isGreaterThan(0.8);
        assertThat(state.resolve("snapshots").resolve(id + ".claim")).doesNotExist();
        assertThat(raised(later, id, "blob = b'x' * (1500 << 20)")).isEqualTo("MemoryError");
        assertThat(later.run(id, "print(sum(kept['rows']))")).isEqualTo("4950\n");
    }

    @Test
    void aBurstOfNewSessionsGrowsThePoolAndTheNextBurstIsServedByKernelsStartedBeforeIt() throws Exception {
        ServerProcess server = server(state);
        SessionCalls calls = calls(server);
        awaitWarm(server, 2);
        for (int i = 0; i < 12; i++) {
            calls.run(newSession(calls), "x = 1");
        }
        // the pool keeps as many as were claimed within a couple of seconds (a loaded machine claims fewer in that
        // time)
        int target = health(server).path("capacity").path("warm_kernels_target").asInt();
        assertThat(target).as(server.log()).isGreaterThanOrEqualTo(5);
        awaitWarm(server, target);
        Thread.sleep(1000);
        for (int i = 0; i < target; i++) {
            assertThat(age(calls, newSession(calls)))
                    .as("kernel %d of %d", i, target)
                    .isGreaterThan(0.8);
        }
    }

    private static double age(SessionCalls calls, String id) {
        return Double.parseDouble(calls.run(id, AGE).strip());
    }

    private static String newSession(SessionCalls calls) {
        return calls.ok("rlm_init_context", Map.of()).path("session_id").asText();
    }

    private static void awaitWarm(ServerProcess server, int count) throws IOException, InterruptedException {
        int warm = 0;
        for (int i = 0; i < 300 && warm < count; i++) {
            warm = health(server).path("capacity").path("warm_kernels").asInt();
            if (warm < count) {
                Thread.sleep(50);
            }
        }
        assertThat(warm).as(server.log()).isEqualTo(count);
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

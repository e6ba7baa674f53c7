package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.ClosedAfterEach;
import dev.rlmmcp.e2e.support.Journey;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.SessionCalls;
import dev.rlmmcp.e2e.support.StdioRpc;
import dev.rlmmcp.e2e.support.UserLaunch;
import dev.rlmmcp.e2e.support.UserServer;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Nothing a user made is lost when the server is stopped the ordinary ways (SIGTERM from a service manager
 * or a terminal, stdin closed by the client that spawned it) right after a step, or when a kernel dies:
 * {@code bin/rlm-mcp} with every default (sandbox, data root = working directory, default state directory
 * below a temporary HOME), restarted on the same state directory.
 */
class UserJourneyDurabilityIT {

    private static final long FIFTY_MB = 50L << 20;
    private static final String SMALL = "small = {'answer': 42, 'words': ['alpha', 'beta'], 'ratio': 0.25}";
    private static final String SMALL_REPR = "{'answer': 42, 'words': ['alpha', 'beta'], 'ratio': 0.25}";
    private static final String CHECK =
            "import hashlib\n" + "print(small, len(corpus), hashlib.sha256(corpus.encode()).hexdigest())";

    @TempDir
    Path tmp;

    private Path home;
    private Journey.BigFile corpus;

    @RegisterExtension
    final ClosedAfterEach open = new ClosedAfterEach();

    @BeforeEach
    void setUp() throws Exception {
        Journey.mode(tmp, "rwxr-xr-x");
        home = Journey.dirs(tmp, "home");
        Journey.mode(home, "rwx------");
    }

    /** The data root is the (0755) temp dir itself: only durability is under test here, not deep paths. */
    private UserLaunch launch() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("HOME", home.toString());
        env.put("XDG_DATA_HOME", home.resolve(".local/share").toString());
        return UserLaunch.here(tmp, env);
    }

    private String expected() {
        return SMALL_REPR + " " + FIFTY_MB + " " + corpus.sha256() + "\n";
    }

    @Test
    void sigtermRightAfterAStepThenARestartFindsEveryVariable() throws Exception {
        corpus = Journey.bigFile(tmp.resolve("corpus.txt"), FIFTY_MB);
        UserServer server = open.add(UserServer.start(launch()));
        McpDriver client = open.add(McpDriver.http(server.mcpUrl()));
        SessionCalls calls = new SessionCalls(client);
        calls.ok("rlm_load_file", Map.of("name", "corpus", "path", "corpus.txt", "data_type", "text"));
        String id = calls.ok("rlm_execute", Map.of("code", SMALL))
                .path("session_id")
                .asText();
        server.terminate();
        client.close();

        UserServer again = open.add(UserServer.start(launch()));
        SessionCalls after = new SessionCalls(open.add(McpDriver.http(again.mcpUrl())));
        JsonNode reply = after.ok("rlm_execute", Map.of("session_id", id, "code", CHECK));
        assertThat(reply.path("stdout").asText())
                .as("after SIGTERM and a restart: %s", reply)
                .isEqualTo(expected());
    }

    @Test
    void stdinClosedRightAfterAStepThenARestartFindsEveryVariable() throws Exception {
        corpus = Journey.bigFile(tmp.resolve("corpus.txt"), FIFTY_MB);
        List<String> stdio = launch().command(List.of("stdio"));
        String id;
        try (StdioRpc raw = new StdioRpc(stdio)) {
            raw.call("rlm_load_file", Map.of("name", "corpus", "path", "corpus.txt", "data_type", "text"));
            id = raw.call("rlm_execute", Map.of("code", SMALL))
                    .path("session_id")
                    .asText();
            raw.closeStdinAndWait(60);
        }

        // Again through the official client, which ends stdin on close (then SIGTERM after 2 s, as it does).
        McpDriver client = McpDriver.stdio(stdio);
        try {
            SessionCalls calls = new SessionCalls(client);
            JsonNode reply = calls.ok("rlm_execute", Map.of("session_id", id, "code", CHECK));
            assertThat(reply.path("stdout").asText())
                    .as("after stdin EOF and a restart: %s", reply)
                    .isEqualTo(expected());
            calls.ok("rlm_execute", Map.of("session_id", id, "code", "later = 'made just before the client left'"));
        } finally {
            client.close();
        }

        try (StdioRpc raw = new StdioRpc(stdio)) {
            JsonNode reply = raw.call("rlm_execute", Map.of("session_id", id, "code", "print(later, small['answer'])"));
            assertThat(reply.path("stdout").asText())
                    .as("after the official client closed: %s", reply)
                    .isEqualTo("made just before the client left 42\n");
            raw.closeStdinAndWait(60);
        }
    }

    @Test
    void aKilledKernelIsReplacedAndTheVariablesFromBeforeAreThere() throws Exception {
        UserServer server = open.add(UserServer.start(launch()));
        McpDriver client = open.add(McpDriver.http(server.mcpUrl()));
        SessionCalls calls = new SessionCalls(client);
        Journey.typicalFiles(tmp);
        calls.ok("rlm_load_file", Map.of("name", "log", "path", "app.log", "data_type", "lines"));
        String id = calls.ok("rlm_execute", Map.of("code", "first = list(range(1000))"))
                .path("session_id")
                .asText();
        calls.ok("rlm_execute", Map.of("code", "second = {'k': 'v'}"));
        calls.awaitSnapshot(id);
        calls.ok("rlm_execute", Map.of("code", "third = 'made just before the kill'"));

        List<ProcessHandle> kernels = server.kernelOf(id);
        assertThat(kernels)
                .as("the session's kernel among the server's processes")
                .hasSize(1);
        ProcessHandle kernel = kernels.getFirst();
        kernel.destroyForcibly();
        kernel.onExit().get(10, java.util.concurrent.TimeUnit.SECONDS);

        // The user's next call: it runs, on a fresh kernel holding what the snapshot had.
        JsonNode next =
                McpDriver.json(client.call("rlm_execute", Map.of("code", "print(sum(first), second, len(log))")));
        JsonNode again =
                McpDriver.json(client.call("rlm_execute", Map.of("code", "print(sum(first), second, len(log))")));
        SoftAssertions soft = new SoftAssertions();
        soft.assertThat(next.path("status").asText() + " " + next.path("stdout").asText())
                .as("the first call after the kill runs: %s", next)
                .isEqualTo("ok 499500 {'k': 'v'} 1000\n");
        soft.assertThat(again.path("stdout").asText())
                .as("the variables from before the kill are there: %s", again)
                .isEqualTo("499500 {'k': 'v'} 1000\n");
        soft.assertThat(server.kernelOf(id)).as("a new kernel").hasSize(1).doesNotContain(kernel);
        boolean namedLost = (next.path("lost_variables").toString() + again.path("lost_variables")).contains("third");
        if (!namedLost) {
            JsonNode third = McpDriver.json(client.call("rlm_execute", Map.of("code", "print(third)")));
            soft.assertThat(third.path("stdout").asText())
                    .as("'third' was neither kept nor named in lost_variables: %s / %s", next, third)
                    .isEqualTo("made just before the kill\n");
        }
        soft.assertAll();
    }

    /** Until the session's snapshot is at least as new as its last step (the debounce, by default 1 s). */
}

package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.ClosedAfterEach;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import dev.rlmmcp.e2e.support.SessionCalls;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** No data lost: the real server killed with SIGKILL and restarted on the same --state-dir. */
class PersistenceIT {

    /** Every variable's repr, hashed: one line to compare before and after. */
    private static final String DIGEST = """
            import hashlib as _h, types as _t
            print(sorted((_n, _h.sha256(repr(_v).encode('utf-8', 'surrogatepass')).hexdigest())
                         for _n, _v in list(globals().items())
                         if not _n.startswith('_') and not isinstance(_v, (_t.ModuleType, _t.FunctionType, type))))
            """;

    @TempDir
    Path state;

    @RegisterExtension
    final ClosedAfterEach open = new ClosedAfterEach();

    private McpDriver client;
    private SessionCalls calls;

    private ServerProcess start(String... extra) throws IOException {
        List<String> args = new ArrayList<>(List.of("--state-dir", state.toString(), "--snapshot-debounce-ms", "200"));
        args.addAll(List.of(extra));
        ServerProcess server = ServerProcess.http(args.toArray(String[]::new));
        open.add(server);
        client = McpDriver.http(server.mcpUrl());
        calls = new SessionCalls(client);
        open.add(client);
        return server;
    }

    @Test
    void killMinus9AfterLoadsAndMutationsThenRestartKeepsEverySessionAndVariable() throws Exception {
        ServerProcess server = start();
        String id = calls.ok(
                        "rlm_init_context",
                        Map.of("context_text", "b\na\nc\na\n", "data_type", "lines", "max_steps", 100))
                .path("session_id")
                .asText();
        calls.ok(
                "rlm_load_data",
                Map.of("session_id", id, "name", "rows", "data", "[{\"k\": 1}, {\"k\": 2}]", "data_type", "json"));
        calls.run(id, """
                from collections import Counter
                counts = Counter(context)
                rows.append({'k': 3})
                wide = 'ü€😀' * 400_000
                raw = bytes(range(256)) * 8192
                nested = {'a': [1, 2.5, None, (3, 'x')], 'b': {1, 2}}
                def total(rs):
                    return sum(r['k'] for r in rs)
                class Tag:
                    def __init__(self, v):
                        self.v = v
                    def __repr__(self):
                        return f'Tag({self.v!r})'
                tag = Tag('t')
                """);
        calls.run(id, "counts['z'] += 7\nnested['a'].append('more')\ndel context");
        String before = calls.run(id, DIGEST);
        Map<String, String> namesBefore = calls.statuses(id);
        String totalBefore = calls.run(id, "print(total(rows), tag)");
        int traceBefore = calls.ok("rlm_get_trace", Map.of("session_id", id))
                .path("trace_length")
                .asInt();
        calls.awaitSnapshot(id);

        server.kill();
        start();

        JsonNode listed = calls.session(id);
        assertThat(listed.path("limits").path("max_steps").asInt()).isEqualTo(100);
        assertThat(listed.path("steps").asInt()).isEqualTo(4);
        assertThat(calls.statuses(id).keySet()).isEqualTo(namesBefore.keySet());
        assertThat(calls.statuses(id)).containsEntry("rows", "spilled").containsEntry("total", "live");
        assertThat(calls.run(id, DIGEST)).isEqualTo(before);
        assertThat(calls.run(id, "print(total(rows), tag)"))
                .isEqualTo(totalBefore)
                .isEqualTo("6 Tag('t')\n");
        JsonNode trace = calls.ok("rlm_get_trace", Map.of("session_id", id));
        assertThat(trace.path("trace_length").asInt()).isEqualTo(traceBefore + 2);
        assertThat(trace.path("steps").get(2).path("input").asText()).contains("from collections import Counter");
    }

    @Test
    void killMinus9DuringALargeSnapshotWriteLeavesTheOldValueOrTheNewNeverATornOne() throws Exception {
        long size = 300_000_000;
        ServerProcess server = start("--max-memory-mb", "2048");
        String id = calls.ok("rlm_init_context", Map.of()).path("session_id").asText();
        calls.run(id, "big = 'a' * " + size);
        calls.awaitSnapshot(id);
        calls.run(id, "big = 'b' * " + size);
        Path snapshots = state.resolve("snapshots").resolve(id);
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        boolean caught = false;
        while (System.nanoTime() < deadline && !(caught = writing(snapshots))) {
            Thread.sleep(2);
        }
        server.kill();
        assertThat(caught)
                .as("the kill came while the new value was being written")
                .isTrue();

        start("--max-memory-mb", "2048");
        String seen = calls.run(id, "print(len(big), big[0], big.count(big[0]) == len(big))");
        assertThat(seen).isIn(size + " a True\n", size + " b True\n");
        try (Stream<Path> files = Files.list(snapshots)) {
            assertThat(files.map(p -> p.getFileName().toString()))
                    .as("the file the kill cut short is swept away")
                    .filteredOn(n -> n.startsWith("big."))
                    .hasSize(1);
        }
    }

    /** Whether a new file of big is being written: one the manifest does not name yet, beside the one it does. */
    private static boolean writing(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().startsWith("big."))
                            .count()
                    > 1;
        } catch (IOException e) {
            return false;
        }
    }

    @Test
    void underASmallMemoryLimitVariablesSpillAndComeBackTransparently() throws Exception {
        start("--max-memory-mb", "16");
        String id = calls.ok("rlm_init_context", Map.of()).path("session_id").asText();
        calls.run(id, "a = 'a' * 6_000_000");
        calls.run(id, "b = 'b' * 6_000_000");
        JsonNode third = calls.ok("rlm_run_repl", Map.of("session_id", id, "code", "c = 'c' * 6_000_000"));
        assertThat(third.path("memory_note").asText())
                .contains("Spilled to disk")
                .contains("a");
        assertThat(calls.statuses(id)).containsEntry("a", "spilled").containsEntry("c", "live");
        assertThat(calls.run(id, "print(len(a), a[-3:])")).isEqualTo("6000000 aaa\n");
        assertThat(calls.statuses(id)).containsEntry("a", "live");
    }

    @Test
    void valuesThatCannotBeSnapshottedAreReportedHonestly() throws Exception {
        start();
        String id = calls.ok("rlm_init_context", Map.of()).path("session_id").asText();
        JsonNode reply = calls.ok(
                "rlm_run_repl",
                Map.of(
                        "session_id",
                        id,
                        "code",
                        "import threading\nlock = threading.Lock()\nnumbers = (n for n in range(10))\nfine = [1]"));
        assertThat(reply.path("not_persisted").path("lock").asText()).contains("cannot be pickled");
        assertThat(reply.path("not_persisted").path("numbers").asText()).contains("generator");
        assertThat(reply.path("not_persisted").has("fine")).isFalse();
        assertThat(calls.ok("rlm_var_info", Map.of("session_id", id, "name", "numbers"))
                        .path("not_persisted")
                        .asText())
                .contains("generator");
    }
}

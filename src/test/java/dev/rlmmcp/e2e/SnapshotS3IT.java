package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.ClosedAfterEach;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import dev.rlmmcp.e2e.support.SessionCalls;
import dev.rlmmcp.testsupport.S3ProxyServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A session resumed on another node: two real servers with their own --state-dir and the same
 * --snapshot-s3 on a real S3 server (S3Proxy); the first is killed with SIGKILL after its snapshot.
 */
class SnapshotS3IT {

    private static final String MIRROR = "s3://rlm-snapshots/cluster/one";
    private static final String DIGEST = """
            import hashlib as _h, types as _t
            print(sorted((_n, _h.sha256(repr(_v).encode('utf-8', 'surrogatepass')).hexdigest())
                         for _n, _v in list(globals().items())
                         if not _n.startswith('_') and not isinstance(_v, (_t.ModuleType, _t.FunctionType, type))))
            """;

    @TempDir
    Path tmp;

    private S3ProxyServer s3;

    @RegisterExtension
    final ClosedAfterEach open = new ClosedAfterEach();

    private McpDriver client;
    private SessionCalls calls;

    @BeforeEach
    void startS3() throws IOException {
        s3 = open.add(S3ProxyServer.start(tmp.resolve("s3")));
    }

    private ServerProcess node(String name) throws IOException {
        ServerProcess server = ServerProcess.http(
                s3.env(),
                "--state-dir",
                tmp.resolve(name).toString(),
                "--snapshot-s3",
                MIRROR,
                "--snapshot-debounce-ms",
                "200");
        open.add(server);
        client = McpDriver.http(server.mcpUrl());
        calls = new SessionCalls(client);
        open.add(client);
        return server;
    }

    private List<String> remoteObjects(String id) throws IOException {
        Path dir = s3.baseDir().resolve("rlm-snapshots").resolve("cluster/one").resolve(id);
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void aSessionSnapshottedOnOneNodeIsResumedOnAnotherAfterKillMinus9() throws Exception {
        ServerProcess a = node("node-a");
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
                raw = bytes(range(256)) * 40_000
                nested = {'a': [1, 2.5, None, (3, 'x')], 'b': {1, 2}}
                def total(rs):
                    return sum(r['k'] for r in rs)
                """);
        calls.run(id, "counts['z'] += 7\nnested['a'].append('more')\ndel context");
        String before = calls.run(id, DIGEST);
        Map<String, String> names = calls.statuses(id);
        int traceBefore = calls.ok("rlm_get_trace", Map.of("session_id", id))
                .path("trace_length")
                .asInt();
        JsonNode snapshotted = calls.awaitSnapshot(id);
        assertThat(snapshotted.path("last_snapshot").has("store_error"))
                .as(snapshotted.toString())
                .isFalse();
        assertThat(remoteObjects(id))
                .contains("manifest.json", "session.json", "trace.jsonl")
                .anyMatch(f -> f.startsWith("raw."))
                .anyMatch(f -> f.startsWith("wide."));

        a.kill();
        ServerProcess b = node("node-b");
        assertThat(calls.ok("rlm_sessions", Map.of()).path("sessions").size()).isZero();

        assertThat(calls.run(id, DIGEST)).isEqualTo(before);
        assertThat(calls.run(id, "print(total(rows), counts['z'], len(raw), wide[:3])"))
                .isEqualTo("6 7 10240000 ü€😀\n");
        assertThat(calls.statuses(id).keySet()).isEqualTo(names.keySet());
        JsonNode listed = calls.session(id);
        assertThat(listed.path("limits").path("max_steps").asInt()).isEqualTo(100);
        assertThat(listed.path("steps").asInt()).isEqualTo(5);
        JsonNode trace = calls.ok("rlm_get_trace", Map.of("session_id", id));
        assertThat(trace.path("trace_length").asInt()).isEqualTo(traceBefore + 2);
        assertThat(trace.path("steps").get(2).path("input").asText()).contains("from collections import Counter");
        assertThat(b.log()).contains("taken from the snapshot store");

        calls.run(id, "rows.append({'k': 4})");
        calls.awaitSnapshot(id);
        calls.ok("rlm_delete_session", Map.of("session_id", id));
        assertThat(remoteObjects(id)).isEmpty();
        JsonNode gone = client.call("rlm_run_repl", Map.of("session_id", id, "code", "print(1)"));
        assertThat(gone.toString()).contains("SESSION_NOT_FOUND");
    }

    @Test
    void aServerAskedForS3SnapshotsWithoutS3DoesNotStart() {
        Map<String, String> noS3 = Map.of(
                "MINIO_ENDPOINT",
                "",
                "AWS_ACCESS_KEY_ID",
                "",
                "AWS_SECRET_ACCESS_KEY",
                "",
                "AWS_PROFILE",
                "",
                "AWS_WEB_IDENTITY_TOKEN_FILE",
                "",
                "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                "",
                "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                "");
        assertThatThrownBy(() -> ServerProcess.http(noS3, "--snapshot-s3", MIRROR))
                .hasMessageContaining("--snapshot-s3 " + MIRROR + " needs S3, but S3 is not configured")
                .hasMessageContaining("MINIO_ENDPOINT");
        assertThatThrownBy(() -> ServerProcess.http(s3.env(), "--snapshot-s3", "s3://Not_A_Bucket/x"))
                .hasMessageContaining("--snapshot-s3:")
                .hasMessageContaining("not a valid bucket name");
    }
    /**
     * Kernel code, in the default sandbox, plants a link to a root-only host file in its snapshot
     * directory and smuggles it (and a "../" path to it) into the manifest by wrapping the function the
     * harness writes the manifest with. The server uploads neither, the data tools cannot
     * read the snapshot keys, and another session goes on as before.
     */
    @Test
    void kernelCodeCannotSmuggleAHostFileIntoTheSnapshotBucket() throws Exception {
        Path secretDir = Files.createDirectories(tmp.resolve("root-only"));
        Path secret = Files.writeString(secretDir.resolve("secret.txt"), "host secret 7f3a");
        Files.setPosixFilePermissions(secret, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        ServerProcess server = node("node-a");
        McpDriver other = McpDriver.http(server.mcpUrl());
        open.add(other);
        SessionCalls bystander = new SessionCalls(other);
        bystander.ok("rlm_execute", Map.of("code", "kept = list(range(5))"));

        String id = calls.ok("rlm_init_context", Map.of("context_text", "x"))
                .path("session_id")
                .asText();
        for (String file : List.of("leak.1", "../../../../../../.." + secret)) {
            calls.run(
                    id, """
                    import sys
                    os = print.__self__.__import__('os')  # the import guard is no boundary
                    d = '/run/rlm-mcp/snapshot'
                    if not os.path.lexists(d + '/leak.1'):
                        os.symlink(%s, d + '/leak.1')
                    store = sys.modules['rlm_harness.store']
                    _dump = getattr(store, '_real_dumps', store.dumps)
                    def evil(obj):
                        if isinstance(obj, dict) and 'variables' in obj:
                            obj['variables']['leak'] = {'kind': 'bytes', 'file': %s, 'lengths': [%d]}
                        return _dump(obj)
                    store._real_dumps = _dump
                    store.dumps = evil
                    step = %s
                    """.formatted(pyString(secret.toString()), pyString(file), Files.size(secret), pyString(file)));
            JsonNode snap = calls.awaitSnapshot(id);
            assertThat(snap.path("last_snapshot").path("store_error").asText())
                    .as(snap.toString())
                    .isNotEmpty();
            try (Stream<Path> all = Files.walk(s3.baseDir())) {
                for (Path p : all.filter(Files::isRegularFile).toList()) {
                    assertThat(Files.readString(p, java.nio.charset.StandardCharsets.ISO_8859_1))
                            .as(p.toString())
                            .doesNotContain("host secret 7f3a");
                }
            }
        }
        JsonNode load = client.call(
                "rlm_load_s3",
                Map.of("bucket", "rlm-snapshots", "key", "cluster/one/" + id + "/manifest.json", "name", "m"));
        assertThat(load.toString()).contains("PERMISSION_DENIED").contains("session snapshots");
        JsonNode listed = client.call("rlm_list_s3", Map.of("bucket", "rlm-snapshots"));
        assertThat(listed.toString()).doesNotContain(id);
        assertThat(bystander
                        .ok("rlm_execute", Map.of("code", "print(sum(kept))"))
                        .toString())
                .contains("10");
    }

    private static String pyString(String s) {
        return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'";
    }
}

package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import dev.rlmmcp.e2e.support.SessionCalls;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One session cannot fill the host's disk nor reach a user namespace, under the default sandbox
 * (bwrap), as root and as a non-root user: writes past --max-disk-mb into $RLM_SPOOL and into the
 * snapshot directory are stopped, the attacker's session keeps what it had, another session loses
 * nothing, and spool directories earlier servers left behind are removed at start-up.
 */
class DiskQuotaIT {

    private static final long LIMIT_MB = 64;
    /** What code writing straight into the snapshot directory may add before the watcher's next look kills it. */
    private static final long OVERSHOOT_MB = 512;

    private static final int NOBODY = 65534;
    private static final List<String> AS_NOBODY =
            List.of("/usr/bin/setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups");

    @TempDir
    static Path dir;

    @BeforeAll
    static void bwrapIsHere() {
        assumeTrue(
                Files.isExecutable(Path.of("/usr/bin/bwrap")),
                "bubblewrap is not installed: the default sandbox is not bwrap here");
    }

    @Test
    void asTheUserRunningTheTests() throws Exception {
        journey(List.of(), Files.createDirectories(dir.resolve("root")));
    }

    @Test
    void asANonRootUser() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "not root: no other user to become");
        assumeTrue(Files.isExecutable(Path.of(AS_NOBODY.get(0))), "setpriv is not installed");
        Path base = Files.createTempDirectory("rlm-it-quota-");
        try {
            Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
            Files.setAttribute(base, "unix:uid", NOBODY);
            Files.setAttribute(base, "unix:gid", NOBODY);
            journey(AS_NOBODY, base);
        } finally {
            ServerProcess.deleteTree(base);
        }
    }

    private static void journey(List<String> runAs, Path base) throws Exception {
        Path runtime = base.resolve("run");
        Path state = base.resolve("state");
        Path stale = Files.createDirectories(runtime.resolve("spool/spool-123456"));
        Files.writeString(stale.resolve("left"), "x".repeat(10_000));
        Path outside = Files.writeString(base.resolve("outside"), "must stay");
        Files.createSymbolicLink(stale.resolve("link"), outside);
        if (!runAs.isEmpty()) {
            chown(base);
        }
        Files.setLastModifiedTime(
                stale,
                java.nio.file.attribute.FileTime.from(java.time.Instant.now().minusSeconds(3600)));
        Path fresh = Files.createDirectories(runtime.resolve("spool/spool-654321"));
        try (ServerProcess server = ServerProcess.http(
                        runAs,
                        Map.of("RLM_SANDBOX", "auto"),
                        base,
                        "--state-dir",
                        state.toString(),
                        "--runtime-dir",
                        runtime.toString(),
                        "--max-disk-mb",
                        "" + LIMIT_MB,
                        "--snapshot-debounce-ms",
                        "100",
                        "--mcp-discovery",
                        "false",
                        "--blocked-imports",
                        "none");
                McpDriver client = McpDriver.http(server.mcpUrl())) {
            assertThat(stale).as("a spool directory no running server uses").doesNotExist();
            assertThat(fresh)
                    .as("one an older server may have made just before it starts bwrap")
                    .exists();
            Files.delete(fresh);
            Files.delete(runtime.resolve("spool"));
            assertThat(Files.readString(outside)).isEqualTo("must stay");
            SessionCalls calls = new SessionCalls(client);

            String victim = calls.ok("rlm_init_context", Map.of("context_text", "a\nb\n", "data_type", "lines"))
                    .path("session_id")
                    .asText();
            calls.run(victim, "kept = list(range(100_000))");
            calls.awaitSnapshot(victim);
            String attacker = calls.ok("rlm_init_context", Map.of("context_text", "x", "data_type", "text"))
                    .path("session_id")
                    .asText();
            calls.run(attacker, "early = 41");
            calls.awaitSnapshot(attacker);
            long free = Files.getFileStore(state).getUsableSpace();

            String spool = calls.run(attacker, """
                    import os
                    chunk, wrote = b'x' * (8 << 20), 0
                    try:
                        for i in range(64):
                            with open(os.path.join(os.environ['RLM_SPOOL'], f'fill-{i}'), 'wb') as f:
                                f.write(chunk)
                            wrote += len(chunk)
                    except OSError as e:
                        print(type(e).__name__, e.strerror, wrote >> 20)
                    """);
            assertThat(spool).as(spool).startsWith("OSError No space left on device");
            assertThat(Long.parseLong(spool.strip().substring(spool.strip().lastIndexOf(' ') + 1)))
                    .isLessThanOrEqualTo(LIMIT_MB);
            assertThat(Files.exists(runtime.resolve("spool")))
                    .as("the spool is not on the host's disk")
                    .isFalse();

            JsonNode tooBig =
                    calls.ok("rlm_run_repl", Map.of("session_id", attacker, "code", "big = b'y' * (80 << 20)"));
            assertThat(tooBig.toString()).doesNotContain("\"error\":{");
            calls.awaitSnapshot(attacker);
            JsonNode big = null;
            for (JsonNode v :
                    calls.ok("rlm_list_vars", Map.of("session_id", attacker)).path("variables")) {
                big = v.path("name").asText().equals("big") ? v : big;
            }
            assertThat(big).isNotNull();
            assertThat(big.path("not_persisted").asText())
                    .as(big.toString())
                    .contains("No space left on device", "--max-disk-mb");
            assertThat(calls.run(attacker, "print(early)")).isEqualTo("41\n");

            // straight into the snapshot directory, bypassing the harness: killed, restored from the last snapshot
            Path snapshots = state.resolve("snapshots").resolve(attacker);
            java.util.concurrent.atomic.AtomicLong peak = new java.util.concurrent.atomic.AtomicLong();
            java.util.concurrent.atomic.AtomicBoolean watching = new java.util.concurrent.atomic.AtomicBoolean(true);
            Thread watcher = Thread.ofPlatform().start(() -> {
                while (watching.get()) {
                    try {
                        peak.accumulateAndGet(usedMb(snapshots), Math::max);
                        Thread.sleep(2);
                    } catch (IOException | java.io.UncheckedIOException e) {
                        // a file went while listed
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            JsonNode flood = client.call("rlm_run_repl", Map.of("session_id", attacker, "code", """
                    import os
                    chunk = b'z' * (8 << 20)
                    for i in range(4096):
                        fd = os.open(f'/run/rlm-mcp/snapshot/junk-{i}', os.O_WRONLY | os.O_CREAT, 0o600)
                        os.write(fd, chunk)
                        os.close(fd)
                    print('wrote everything')
                    """));
            watching.set(false);
            watcher.join();
            assertThat(flood.toString()).doesNotContain("wrote everything").contains("MiB disk limit (--max-disk-mb)");
            assertThat(peak.get()).as("the directory's peak").isLessThanOrEqualTo(LIMIT_MB + OVERSHOOT_MB);
            assertThat(server.log()).contains("MiB into " + snapshots);
            assertThat(free - Files.getFileStore(state).getUsableSpace())
                    .as("host free space spent")
                    .isLessThan((LIMIT_MB + OVERSHOOT_MB) << 20);

            assertThat(calls.run(attacker, "print(early)")).isEqualTo("41\n");
            assertThat(usedMb(snapshots)).as("swept at restore").isLessThanOrEqualTo(LIMIT_MB);
            assertThat(calls.run(victim, "print(sum(kept), context)")).isEqualTo("4999950000 ['a', 'b']\n");

            String userns = calls.run(attacker, """
                    import ctypes, os, subprocess, threading
                    libc = ctypes.CDLL(None, use_errno=True)
                    print(libc.unshare(0x10000000), os.strerror(ctypes.get_errno()))
                    try:
                        r = subprocess.run(['unshare', '-U', 'true'], capture_output=True)
                        print('unshare -U', r.returncode != 0)
                    except FileNotFoundError:
                        print('unshare -U', True)
                    seen = []
                    t = threading.Thread(target=seen.append, args=(1,))
                    t.start(); t.join()
                    print(seen, subprocess.run(['echo', 'child'], capture_output=True, text=True).stdout.strip())
                    """);
            assertThat(userns.split("\n"))
                    .as(userns)
                    .containsExactly("-1 Operation not permitted", "unshare -U True", "[1] child");
        }
    }

    private static long usedMb(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(p -> Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS))
                            .mapToLong(p -> p.toFile().length())
                            .sum()
                    >> 20;
        }
    }

    private static void chown(Path tree) throws IOException {
        try (Stream<Path> all = Files.walk(tree)) {
            for (Path p : all.toList()) {
                Files.setAttribute(p, "unix:uid", NOBODY, LinkOption.NOFOLLOW_LINKS);
                Files.setAttribute(p, "unix:gid", NOBODY, LinkOption.NOFOLLOW_LINKS);
            }
        }
    }
}

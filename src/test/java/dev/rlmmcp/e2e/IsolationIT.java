package dev.rlmmcp.e2e;

import static dev.rlmmcp.e2e.support.McpDriver.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.ClosedAfterEach;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import dev.rlmmcp.e2e.support.SessionCalls;
import dev.rlmmcp.testsupport.UnixListener;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * One session can never hurt another session, the server or the host: the real server with its
 * default sandbox, its kernels running code that attacks the pipe to the host (forged frames), the
 * stderr relay (floods, an endless line) and the host's patience (SIGSTOP), while other sessions
 * keep working; and hundreds of kernels with sustained traffic, snapshots still taken on time.
 */
class IsolationIT {

    /** Kernel code reaches past the import policy (a guard rail, not a boundary) to the harness's pipe fds. */
    private static final String REACH = """
            imp = print.__self__.__import__
            os, struct, rlm_harness = imp('os'), imp('struct'), imp('rlm_harness')
            pipe = rlm_harness.KERNEL.callbacks.channel.fd_out
            diag = pipe + 1
            """;

    @TempDir
    Path state;

    @RegisterExtension
    final ClosedAfterEach open = new ClosedAfterEach();

    private ServerProcess server;
    private McpDriver client;
    private SessionCalls calls;

    private void start(String... extra) throws IOException {
        List<String> args = new ArrayList<>(List.of("--state-dir", state.toString()));
        args.addAll(List.of(extra));
        server = ServerProcess.http(args.toArray(String[]::new));
        open.add(server);
        client = McpDriver.http(server.mcpUrl());
        open.add(client);
        calls = new SessionCalls(client);
    }

    private String newSession() {
        return calls.ok("rlm_init_context", Map.of()).path("session_id").asText();
    }

    private CompletableFuture<JsonNode> runAsync(String id, String code, int timeoutS) {
        return client.callAsync("rlm_execute", Map.of("session_id", id, "code", code, "timeout_s", timeoutS), false)
                .thenApply(line -> line.path("result"));
    }

    private JsonNode health() throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create(server.baseUrl() + "/health"))
                            .timeout(Duration.ofSeconds(10))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            return McpDriver.MAPPER.readTree(r.body());
        }
    }

    private long heapPeak() throws Exception {
        return health().path("memory").path("jvm_heap_peak_bytes").asLong();
    }

    private long threads() throws IOException {
        return Files.readAllLines(Path.of("/proc", Long.toString(server.pid()), "status")).stream()
                .filter(l -> l.startsWith("Threads:"))
                .mapToLong(l -> Long.parseLong(l.substring(8).trim()))
                .findFirst()
                .orElseThrow();
    }

    private String threadDump() throws Exception {
        Path jvm = Path.of(ProcessHandle.current().info().command().orElseThrow());
        Process jcmd = new ProcessBuilder(
                        jvm.resolveSibling("jcmd").toString(), Long.toString(server.pid()), "Thread.print")
                .redirectErrorStream(true)
                .start();
        String out = new String(jcmd.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(jcmd.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return out;
    }

    @Test
    void forgedHugeFramesFromFourSessionsAtOnceHurtOnlyThoseSessions() throws Exception {
        start();
        List<String> attackers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            String id = newSession();
            calls.run(id, "kept = " + i);
            calls.awaitSnapshot(id);
            attackers.add(id);
        }
        String bystander = newSession();
        calls.run(bystander, "mine = 'safe'");
        // two declare a 2 GiB payload, two a 2 GiB header; then they stream bytes for as long as the pipe lasts
        List<CompletableFuture<JsonNode>> attacks = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            String forged = i % 2 == 0
                    ? "struct.pack('>IQ', 9, 2**31) + b'{\"id\": 1}'"
                    : "struct.pack('>IQ', 2**31 - 1, 0) + b'{'";
            attacks.add(runAsync(
                    attackers.get(i),
                    REACH + "os.write(pipe, " + forged + ")\n" + "while True:\n    os.write(pipe, b' ' * 65536)\n",
                    60));
        }
        // the bystander is served all along
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        int served = 0;
        while (System.nanoTime() < deadline
                || !CompletableFuture.allOf(attacks.toArray(CompletableFuture[]::new))
                        .isDone()) {
            assertThat(calls.run(bystander, "print(mine)")).isEqualTo("safe\n");
            served++;
            if (served > 500) {
                break;
            }
        }
        for (int i = 0; i < 4; i++) {
            JsonNode result = attacks.get(i).get(60, TimeUnit.SECONDS);
            JsonNode reply = json(result);
            assertThat(reply.path("status").asText()).as(reply.toString()).isEqualTo("crashed");
            assertThat(reply.path("message").asText())
                    .as(reply.toString())
                    .contains("the kernel broke the protocol: it sent a frame declaring")
                    .contains("A fresh kernel is ready with the snapshot");
            assertThat(reply.path("variables_lost").asBoolean()).isFalse();
            // restored from its snapshot
            assertThat(calls.run(attackers.get(i), "print(kept)")).isEqualTo(i + "\n");
        }
        assertThat(calls.run(bystander, "print(mine)")).isEqualTo("safe\n");
        assertThat(heapPeak()).as("JVM heap peak").isLessThan(512L << 20);
        assertThat(server.log()).doesNotContain("OutOfMemoryError");
    }

    @Test
    void aServiceOnAUnixSocketInTheDataRootOrInTmpIsNotReachableFromKernelCode() throws Exception {
        Path data = Files.createDirectories(state.resolveSibling(state.getFileName() + "-data"));
        Files.setPosixFilePermissions(data, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        try (UnixListener deep = UnixListener.at(data.resolve("projects/acme/run/agent/service.sock"));
                UnixListener tmp = UnixListener.at(Path.of(
                        "/tmp", "rlm-isolation-" + ProcessHandle.current().pid() + ".sock"))) {
            start("--data-root", data.toString(), "--blocked-imports", "none");
            String id = newSession();
            JsonNode reply = calls.ok(
                    "rlm_execute", Map.of("session_id", id, "code", UnixListener.kernelCode(deep.path(), tmp.path())));
            assertThat(reply.path("stdout").asText()).as(reply.toString()).isEqualTo(UnixListener.refusedOutput(2));
            JsonNode raised = json(client.call(
                    "rlm_execute",
                    Map.of(
                            "session_id",
                            id,
                            "code",
                            "import socket\nsocket.socket(socket.AF_UNIX).connect('" + deep.path() + "')")));
            assertThat(raised.path("error").path("message").asText())
                    .as(raised.toString())
                    .contains("unix sockets are not available in the rlm-mcp sandbox");
            assertThat(deep.accepted() + tmp.accepted())
                    .as("connections the host services accepted")
                    .isZero();
        } finally {
            ServerProcess.deleteTree(data);
        }
    }

    @Test
    void stderrFloodsAndAnEndlessLineLeaveTheLogAndTheHeapBounded() throws Exception {
        start();
        String noisy = newSession();
        String quiet = newSession();
        calls.run(quiet, "mine = 1");
        int before = server.log().length();
        // 200 MB of 100-byte lines in one step
        calls.run(
                noisy,
                REACH + "block = (b'e' * 99 + b'\\n') * 10000\nfor _ in range(200):\n    os.write(diag, block)\n");
        Thread.sleep(500);
        int afterLines = server.log().length();
        assertThat(afterLines - before)
                .as("log growth for 200 MB of stderr lines")
                .isLessThan(1 << 20);
        assertThat(server.log().substring(before)).contains("lines dropped");
        // 1.5 GB in one line that stays open: nothing of it is held
        calls.run(noisy, REACH + "block = b'z' * (1 << 20)\nfor _ in range(1500):\n    os.write(diag, block)\n");
        assertThat(calls.run(quiet, "print(mine)")).isEqualTo("1\n");
        assertThat(server.log().length() - afterLines)
                .as("log growth for an open 1.5 GB line")
                .isLessThan(64 << 10);
        calls.run(noisy, REACH + "os.write(diag, b'\\n')\n");
        Thread.sleep(500);
        assertThat(server.log().length() - afterLines)
                .as("log growth once the line ends")
                .isLessThan(64 << 10);
        assertThat(server.log().substring(afterLines)).contains("more bytes of this line cut]");
        assertThat(heapPeak()).as("JVM heap peak").isLessThan(512L << 20);
    }

    @Test
    void aKernelStoppedAfterAStepIsKilledAndRestoredWithinTheNextCallsTimeout() throws Exception {
        start("--snapshot-debounce-ms", "200");
        String stopped = newSession();
        String other = newSession();
        calls.run(other, "mine = 2");
        calls.run(stopped, "kept = 7");
        calls.awaitSnapshot(stopped);
        long threadsBefore = threads();
        calls.run(
                stopped,
                REACH + "threading, time, signal = imp('threading'), imp('time'), imp('signal')\n"
                        + "threading.Thread(target=lambda: (time.sleep(0.3), os.kill(os.getpid(), signal.SIGSTOP))).start()\n");
        Thread.sleep(600);
        // a pile of calls on the stopped session: each answers within its own timeout and the grace
        long started = System.nanoTime();
        List<CompletableFuture<JsonNode>> queued = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            queued.add(runAsync(stopped, "print(kept)", 2));
        }
        assertThat(calls.run(other, "print(mine)")).isEqualTo("2\n");
        int restored = 0;
        int refused = 0;
        for (CompletableFuture<JsonNode> call : queued) {
            JsonNode result = call.get(60, TimeUnit.SECONDS);
            String text = McpDriver.text(result);
            JsonNode reply = json(result);
            if (reply.has("error") && reply.path("error").has("code")) {
                assertThat(text).as(text).contains("TIMEOUT").contains("is busy");
                refused++;
            } else {
                if (reply.path("status").asText().equals("killed")) {
                    // the call that found the kernel stopped under it
                    assertThat(reply.path("message").asText())
                            .contains("stopped (SIGSTOP)")
                            .contains("A fresh kernel is ready");
                    restored++;
                    continue;
                }
                assertThat(reply.path("stdout").asText()).as(reply.toString()).isEqualTo("7\n");
                if (reply.has("kernel_restarted")) {
                    // a snapshot found it stopped before this call ran
                    assertThat(reply.path("kernel_restarted").path("message").asText())
                            .contains("stopped (SIGSTOP)")
                            .contains("A fresh kernel is ready");
                    restored++;
                }
            }
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        assertThat(seconds).as("all 40 calls answered").isLessThan(2 + 2 + 10);
        assertThat(restored).isEqualTo(1);
        assertThat(refused).isGreaterThan(0);
        assertThat(threads() - threadsBefore).as("threads grown").isLessThan(100);
        assertThat(calls.run(other, "print(mine)")).isEqualTo("2\n");
        assertThat(calls.run(stopped, "print(kept)")).isEqualTo("7\n");
    }

    @Test
    void withHundredsOfKernelsAndSustainedCallsSnapshotsAreStillTakenOnTime() throws Exception {
        int kernels = Integer.getInteger("rlm.it.kernels", 150);
        // all of them running at once: past the default --max-kernels (64 on this machine) idle ones would be released
        start("--snapshot-debounce-ms", "500", "--max-kernels", String.valueOf(kernels + 8));
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < kernels; i++) {
            ids.add(newSession());
        }
        // a kernel for each, with its stderr written to once (its reader is live)
        for (int from = 0; from < kernels; from += 8) {
            List<CompletableFuture<JsonNode>> batch = new ArrayList<>();
            for (String id : ids.subList(from, Math.min(kernels, from + 8))) {
                batch.add(runAsync(id, REACH + "os.write(diag, b'up\\n')\nkept = 1", 60));
            }
            for (CompletableFuture<JsonNode> f : batch) {
                JsonNode result = f.get(120, TimeUnit.SECONDS);
                assertThat(result.path("isError").asBoolean())
                        .as(result.toString())
                        .isFalse();
            }
        }
        // every pipe reader is a platform thread of its own (a thread dump lists those), none a virtual
        // thread holding a carrier in a native read
        String dump = threadDump();
        // (named for their sessions; warm kernels' are named warm-N until a session claims one)
        assertThat(dump.split("\"kernel-log-s-", -1).length - 1)
                .as("stderr relay threads")
                .isEqualTo(kernels);
        assertThat(dump.split("\"kernel-frames-s-", -1).length - 1)
                .as("frame reader threads")
                .isEqualTo(kernels);
        // sustained calls on a few sessions: each step's snapshot follows within the debounce and some slack
        List<String> busy = ids.subList(0, 10);
        long worstMs = 0;
        for (int round = 0; round < 5; round++) {
            List<CompletableFuture<JsonNode>> steps = new ArrayList<>();
            for (String id : busy) {
                steps.add(runAsync(id, "kept += 1", 30));
            }
            for (CompletableFuture<JsonNode> f : steps) {
                assertThat(f.get(60, TimeUnit.SECONDS).path("isError").asBoolean())
                        .isFalse();
            }
            Instant stepped = Instant.now();
            for (String id : busy) {
                calls.awaitSnapshot(id);
            }
            worstMs = Math.max(worstMs, Duration.between(stepped, Instant.now()).toMillis());
        }
        assertThat(worstMs).as("longest wait for the snapshots of a round").isLessThan(10_000);
        // a brand-new session is snapshotted too
        String fresh = newSession();
        calls.run(fresh, "late = 'yes'");
        calls.awaitSnapshot(fresh);
    }
}

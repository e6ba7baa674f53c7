package dev.rlmmcp.kernel.channel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.kernel.process.KernelSpec;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.kernel.protocol.KernelRequest;
import dev.rlmmcp.kernel.protocol.Ready;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A call's wait polls the pipe before it blocks, and sets its timers only when it blocks: kernels
 * (real processes, speaking the frame protocol by hand) that answer at once, answer with part of a
 * frame, or keep the call busy with callbacks all end as the call's time limit says.
 */
class KernelWaitTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String FRAMES = """
            import json, os, struct, sys, time
            def send(header):
                body = json.dumps(header).encode()
                os.write(1, struct.pack(">IQ", len(body), 0) + body)
            def receive():
                head = b""
                while len(head) < 12:
                    head += os.read(0, 12 - len(head))
                length, _ = struct.unpack(">IQ", head)
                body = b""
                while len(body) < length:
                    body += os.read(0, length - len(body))
                return json.loads(body)
            send({"ready": True, "pid": os.getpid(), "python": "3.11.0", "protocol": %d})
            """.formatted(Ready.PROTOCOL);
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

    @TempDir
    Path dir;

    @AfterEach
    void stop() {
        timer.shutdownNow();
    }

    private Kernel start(String behaviour) throws Exception {
        Path harness = Files.createDirectories(dir.resolve("harness"));
        Files.writeString(harness.resolve("__main__.py"), FRAMES + behaviour);
        KernelSpec spec = new KernelSpec(Path.of("/usr/bin/python3"), harness, List.of("{}"), dir, List.of(dir));
        return Kernel.start(new ProcessLauncher(), spec, JSON, timer, "wait-test", Duration.ofSeconds(30));
    }

    private static KernelReply<?> vars(Kernel kernel) throws KernelDiedException {
        return kernel.call(
                new KernelRequest.Vars(),
                null,
                Duration.ofSeconds(1),
                Duration.ofMillis(500),
                KernelCallbacks.NONE,
                CallContext.NONE);
    }

    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aPromptAnswerIsReadAndTheRequestAsksTheHarnessToPollForTheNext() throws Exception {
        try (Kernel kernel = start("""
                while True:
                    request = receive()
                    if request.get("poll_us") == %d:
                        send({"id": request["id"], "ok": True, "variables": []})
                    else:
                        send({"id": request["id"], "ok": False, "code": "NO_POLL", "message": repr(request)})
                """.formatted(BusyPoll.MICROS))) {
            for (int i = 0; i < 50; i++) {
                assertThat(vars(kernel).refusal()).isNull();
            }
        }
    }

    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aKernelThatSendsPartOfAFrameAndStopsIsKilledAtTheTimeLimit() throws Exception {
        try (Kernel kernel = start("""
                receive()
                os.write(1, struct.pack(">IQ", 100, 0) + b'{"id": 1')
                time.sleep(60)
                """)) {
            long started = System.nanoTime();
            assertThatThrownBy(() -> vars(kernel)).isInstanceOf(KernelDiedException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - started))
                    .isBetween(Duration.ofMillis(900), Duration.ofSeconds(10));
        }
    }

    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void callbacksInQuickSuccessionDoNotKeepACallFromItsTimeLimit() throws Exception {
        try (Kernel kernel = start("""
                import signal
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                receive()
                n = 0
                while True:
                    n += 1
                    send({"cb": n, "kind": "llm", "request": {}})
                """)) {
            long started = System.nanoTime();
            assertThatThrownBy(() -> vars(kernel))
                    .isInstanceOf(KernelDiedException.class)
                    .extracting(e -> ((KernelDiedException) e).reason())
                    .isEqualTo(KernelDiedException.Cause.UNANSWERED);
            assertThat(Duration.ofNanos(System.nanoTime() - started))
                    .isBetween(Duration.ofMillis(1400), Duration.ofSeconds(10));
        }
    }

    @Test
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aKernelThatTakesARequestAndNeverAnswersEndsTheCallWithinItsLimitAndTheKillGraceOnAnyThread() throws Exception {
        for (boolean virtual : new boolean[] {false, true}) {
            try (Kernel kernel = start("""
                    import signal
                    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
                    receive()
                    time.sleep(120)
                    """)) {
                long started = System.nanoTime();
                java.util.concurrent.atomic.AtomicReference<Throwable> thrown =
                        new java.util.concurrent.atomic.AtomicReference<>();
                Runnable call = () -> {
                    try {
                        vars(kernel);
                    } catch (Throwable e) {
                        thrown.set(e);
                    }
                };
                (virtual ? Thread.ofVirtual() : Thread.ofPlatform()).start(call).join();
                Duration took = Duration.ofNanos(System.nanoTime() - started);
                assertThat(thrown.get())
                        .as("virtual %s", virtual)
                        .isInstanceOf(KernelDiedException.class)
                        .extracting(e -> ((KernelDiedException) e).reason())
                        .isEqualTo(KernelDiedException.Cause.UNANSWERED);
                assertThat(thrown.get().getMessage())
                        .contains("did not answer the server's request for its variables " + "within 1.5 s");
                assertThat(took)
                        .as("virtual %s", virtual)
                        .isBetween(
                                Duration.ofMillis(1400),
                                Duration.ofMillis(1500).plus(Kernel.KILL_GRACE).plusSeconds(1));
            }
        }
    }

    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void anAbandonedKernelEndsTheCallWaitingOnItAtOnceWithTheReason() throws Exception {
        try (Kernel kernel = start("""
                receive()
                time.sleep(120)
                """)) {
            timer.schedule(() -> kernel.abandon("given up on"), 300, java.util.concurrent.TimeUnit.MILLISECONDS);
            long started = System.nanoTime();
            assertThatThrownBy(() -> kernel.call(
                            new KernelRequest.Snapshot(),
                            null,
                            Duration.ofSeconds(20),
                            Duration.ofSeconds(2),
                            KernelCallbacks.NONE,
                            CallContext.NONE))
                    .isInstanceOf(KernelDiedException.class)
                    .hasMessage("given up on")
                    .extracting(e -> ((KernelDiedException) e).reason())
                    .isEqualTo(KernelDiedException.Cause.UNANSWERED);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
        }
    }
}

package dev.rlmmcp.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.data.Download;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Loads streamed from a source into the kernel in chunks: content, caps, failures mid-stream. */
class SessionStreamTest {

    private static final long LIMIT = 16L * 1024 * 1024;

    @TempDir
    Path dir;

    Sessions sessions;
    Session session;

    @BeforeEach
    void start() {
        sessions =
                new Sessions(new KernelFactory(TestSettings.in(dir, LIMIT), new ProcessLauncher(), new ObjectMapper()));
        session = sessions.resolve(null, "test");
    }

    @AfterEach
    void stop() {
        sessions.close();
    }

    private static Download download(byte[] bytes, boolean declared) {
        return new Download(new ByteArrayInputStream(bytes), declared ? bytes.length : -1, "test://data", null);
    }

    private String run(String code) {
        ObjectNode reply = TestReplies.step(session.execute(StepRequest.of(code, Duration.ofSeconds(30))));
        assertThat(reply.path("error").isObject()).as("%s", reply).isFalse();
        return reply.path("stdout").asText();
    }

    @Test
    void textWithCharactersSplitAcrossChunksArrivesWhole() {
        StringBuilder text = new StringBuilder();
        while (text.length() < 3 * 1024 * 1024) {
            text.append("é€😀 line\n");
        }
        byte[] bytes = text.toString().getBytes(StandardCharsets.UTF_8);
        ObjectNode reply = TestReplies.load(
                session.loadStream("t", DataType.TEXT, download(bytes, true), "key", "test", CallContext.NONE));
        assertThat(reply.path("source_bytes").asLong()).isEqualTo(bytes.length);
        assertThat(reply.path("source").asText()).isEqualTo("test://data");
        assertThat(run("print(len(t), t.count('€'), '\\ufffd' in t)"))
                .isEqualTo(text.length()
                        - text.codePoints().filter(c -> c > 0xffff).count() + " "
                        + text.chars().filter(c -> c == '€').count() + " False\n");
    }

    @Test
    void everyDataTypeIsParsed() {
        session.loadStream(
                "j",
                DataType.JSON,
                download("{\"a\": [1, 2]}".getBytes(StandardCharsets.UTF_8), true),
                "key",
                "t",
                CallContext.NONE);
        session.loadStream(
                "l",
                DataType.LINES,
                download("x\r\ny\nz".getBytes(StandardCharsets.UTF_8), false),
                "key",
                "t",
                CallContext.NONE);
        session.loadStream(
                "c",
                DataType.CSV,
                download("k,v\na,1\nb,2\n".getBytes(StandardCharsets.UTF_8), true),
                "key",
                "t",
                CallContext.NONE);
        assertThat(run("print(j['a'], l, c)"))
                .isEqualTo("[1, 2] ['x', 'y', 'z'] [{'k': 'a', 'v': '1'}, {'k': 'b', 'v': '2'}]\n");
    }

    @Test
    void aSourceThatFailsMidStreamStoresNothingAndTheSessionGoesOn() {
        run("kept = 'still here'");
        InputStream failing = new InputStream() {
            private int sent;

            @Override
            public int read() throws IOException {
                if (sent++ < 3 * 1024 * 1024) {
                    return 'a';
                }
                throw new IOException("connection reset by peer");
            }
        };
        assertThatThrownBy(() -> TestReplies.load(session.loadStream(
                        "broken",
                        DataType.TEXT,
                        new Download(failing, -1, "test://x", null),
                        "key",
                        "t",
                        CallContext.NONE)))
                .isInstanceOfSatisfying(RlmException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.UPSTREAM_ERROR);
                    assertThat(e.argument()).isEqualTo("key");
                    assertThat(e.getMessage()).contains("connection reset by peer", "nothing was stored");
                });
        assertThat(run("print(kept, 'broken' in globals())")).isEqualTo("still here False\n");
        assertThat(sessions.resolve(null, "test").kernelRestarts()).isZero();
    }

    @Test
    void aDeclaredSizeOverTheMemoryLimitIsRefusedBeforeAnyByteMoves() {
        AtomicBoolean read = new AtomicBoolean();
        InputStream never = new InputStream() {
            @Override
            public int read() {
                read.set(true);
                return -1;
            }
        };
        assertThatThrownBy(() -> TestReplies.load(session.loadStream(
                        "big",
                        DataType.TEXT,
                        new Download(never, LIMIT + 1, "test://big", null),
                        "key",
                        "t",
                        CallContext.NONE)))
                .isInstanceOfSatisfying(RlmException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.TOO_LARGE);
                    assertThat(e.fix()).contains("--max-memory-mb");
                });
        assertThat(read).isFalse();
    }

    @Test
    void anUndeclaredStreamIsCutAtTheMemoryLimit() {
        byte[] bytes = new byte[(int) LIMIT + 1024 * 1024];
        java.util.Arrays.fill(bytes, (byte) 'x');
        assertThatThrownBy(() -> TestReplies.load(
                        session.loadStream("big", DataType.TEXT, download(bytes, false), "url", "t", CallContext.NONE)))
                .isInstanceOfSatisfying(RlmException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.TOO_LARGE);
                    assertThat(e.argument()).isEqualTo("url");
                });
        assertThat(run("print('big' in globals())")).isEqualTo("False\n");
    }

    /** A source that sends a few bytes every 50 ms and never ends, until it is closed. */
    private static InputStream trickle() {
        return new InputStream() {
            private volatile boolean closed;

            @Override
            public int read() throws IOException {
                throw new UnsupportedOperationException();
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                if (closed) {
                    throw new java.net.SocketException("Socket closed");
                }
                b[off] = 'x';
                return 1;
            }

            @Override
            public void close() {
                closed = true;
            }
        };
    }

    @Test
    void aTrickleThatOutlastsTheTimeLimitIsCutWithTheVariablesKept() {
        Settings base = TestSettings.in(dir, LIMIT);
        Settings quick = new Settings(
                base.python(),
                base.dataRoot(),
                base.runtimeDir(),
                base.memoryLimitBytes(),
                base.cleanupThreshold(),
                base.cleanupTarget(),
                base.outputCap(),
                base.defaultTimeout(),
                Duration.ofSeconds(2),
                base.interruptGrace(),
                base.kernelStartTimeout(),
                base.idleTimeout(),
                base.importPolicy());
        try (Sessions own = new Sessions(new KernelFactory(quick, new ProcessLauncher(), new ObjectMapper()))) {
            Session s = own.resolve(null, "quick");
            s.execute(StepRequest.of("kept = 1", Duration.ofSeconds(30)));
            long started = System.nanoTime();
            assertThatThrownBy(() -> TestReplies.load(s.loadStream(
                            "slow",
                            DataType.TEXT,
                            new Download(trickle(), -1, "test://slow", null),
                            "url",
                            "t",
                            CallContext.NONE)))
                    .isInstanceOfSatisfying(RlmException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.INTERRUPTED);
                        assertThat(e.getMessage()).contains("time limit", "nothing was stored");
                    });
            assertThat((System.nanoTime() - started) / 1_000_000).isLessThan(6_000);
            assertThat(s.execute(StepRequest.of("print(kept, 'slow' in globals())", Duration.ofSeconds(30)))
                            .exec()
                            .stdout())
                    .isEqualTo("1 False\n");
            assertThat(s.kernelRestarts()).isZero();
        }
    }

    @Test
    void aCancelledTransferStopsAndTheSessionGoesOn() throws Exception {
        run("kept = 2");
        java.util.concurrent.CompletableFuture<RlmException> failure = new java.util.concurrent.CompletableFuture<>();
        CallContext request = CallContext.create();
        Thread caller = Thread.ofPlatform().start(() -> {
            try {
                session.loadStream(
                        "slow", DataType.TEXT, new Download(trickle(), -1, "test://slow", null), "url", "t", request);
                failure.complete(null);
            } catch (RlmException e) {
                failure.complete(e);
            }
        });
        Thread.sleep(500);
        request.cancel();
        RlmException e = failure.get(10, java.util.concurrent.TimeUnit.SECONDS);
        caller.join();
        assertThat(e).isNotNull();
        assertThat(e.code()).isEqualTo(ErrorCode.INTERRUPTED);
        assertThat(e.getMessage()).contains("cancelled");
        assertThat(run("print(kept, 'slow' in globals())")).isEqualTo("2 False\n");
        assertThat(session.kernelRestarts()).isZero();
    }

    @Test
    void progressIsReportedToWhoeverTracksIt() {
        byte[] bytes = new byte[5 * 1024 * 1024];
        java.util.Arrays.fill(bytes, (byte) 'y');
        CallContext request = CallContext.create();
        session.loadStream("p", DataType.TEXT, download(bytes, true), "key", "t", request);
        CallContext.Progress last = request.progress();
        assertThat(last.what()).contains("test://data");
        assertThat(last.done()).isEqualTo(bytes.length);
        assertThat(last.total()).isEqualTo(bytes.length);
    }
}

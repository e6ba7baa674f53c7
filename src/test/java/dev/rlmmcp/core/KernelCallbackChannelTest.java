package dev.rlmmcp.core;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.channel.CallbackDepth;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The kernel's callback channel, end to end between a real CPython kernel and the host. */
class KernelCallbackChannelTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private Sessions sessions;
    private Session session;

    @BeforeEach
    void start() {
        sessions = new Sessions(new KernelFactory(TestSettings.in(dir), new ProcessLauncher(), JSON));
        session = sessions.resolve(null, "test-connection");
    }

    @AfterEach
    void stop() {
        sessions.close();
    }

    private ObjectNode run(String code, HostCallbacks callbacks) {
        return run(code, callbacks, CallContext.NONE);
    }

    private ObjectNode run(String code, HostCallbacks callbacks, CallContext context) {
        return TestReplies.step(session.execute(new StepRequest(
                "import rlm_harness as h\n" + code,
                Duration.ofSeconds(20),
                StepExtras.of(null, callbacks, null),
                context)));
    }

    @Test
    void aRequestFromUserCodeIsAnsweredByItsKindsHandler() {
        List<Integer> depths = new CopyOnWriteArrayList<>();
        HostCallbacks callbacks = HostCallbacks.byKind(Map.of("echo", (kind, request) -> {
            depths.add(CallbackDepth.current());
            return JSON.createObjectNode().put("kind", kind).set("got", request);
        }));
        ObjectNode reply = run("""
                r = h.KERNEL.callbacks.call("echo", {"text": "héllo", "n": [1, 2]})
                print(r["kind"], r["got"]["text"], r["got"]["n"])
                """, callbacks);
        assertThat(reply.path("status").asText()).isEqualTo("ok");
        assertThat(reply.path("stdout").asText()).isEqualTo("echo héllo [1, 2]\n");
        assertThat(depths).containsExactly(1);
        assertThat(CallbackDepth.current()).isZero();
    }

    @Test
    void manyRequestsAreOutstandingAtOnceAndEachAnswerFindsItsRequest() {
        int n = 8;
        CountDownLatch allArrived = new CountDownLatch(n);
        HostCallbacks callbacks = (kind, request) -> {
            allArrived.countDown();
            if (!allArrived.await(10, TimeUnit.SECONDS)) {
                throw new CallbackRefused("NOT_CONCURRENT", "the requests did not arrive together");
            }
            int i = request.path("i").asInt();
            Thread.sleep((n - i) * 15L);
            return JSON.getNodeFactory().numberNode(i * i);
        };
        ObjectNode reply = run("""
                waiting = [h.KERNEL.callbacks.submit("square", {"i": i}) for i in range(8)]
                print([p.result() for p in waiting])
                """, callbacks);
        assertThat(reply.path("stdout").asText()).isEqualTo("[0, 1, 4, 9, 16, 25, 36, 49]\n");
        assertThat(run("print('next step')", HostCallbacks.NONE).path("stdout").asText())
                .isEqualTo("next step\n");
    }

    @Test
    void refusalsAndFailuresAreRaisedInPythonWithTheirCode() {
        HostCallbacks callbacks = HostCallbacks.byKind(Map.of(
                "limited",
                        (kind, request) -> {
                            throw new CallbackRefused("LIMIT_EXCEEDED", "no more calls in this step");
                        },
                "broken",
                        (kind, request) -> {
                            throw new IllegalStateException("boom");
                        }));
        ObjectNode reply = run("""
                for kind in ("limited", "broken", "unknown"):
                    try:
                        h.KERNEL.callbacks.call(kind, {})
                    except h.CallbackError as e:
                        print(kind, e.code, e)
                h.KERNEL.callbacks.call("limited", {})
                """, callbacks);
        assertThat(reply.path("stdout").asText()).isEqualTo("""
                limited LIMIT_EXCEEDED no more calls in this step
                broken INTERNAL_ERROR the host failed to answer this broken request: java.lang.IllegalStateException: boom
                unknown NOT_AVAILABLE no host callbacks of kind 'unknown' are available here
                """);
        assertThat(reply.path("status").asText()).isEqualTo("error");
        assertThat(reply.path("error").path("type").asText()).isEqualTo("CallbackError");
        assertThat(reply.path("error").path("traceback").asText())
                .contains("<cell")
                .doesNotContain("harness");
    }

    @Test
    void aTimeoutInterruptsTheWaitingCodeAndAbandonsTheHandlers() throws Exception {
        CountDownLatch interrupted = new CountDownLatch(2);
        AtomicInteger started = new AtomicInteger();
        HostCallbacks slow = (kind, request) -> {
            started.incrementAndGet();
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                interrupted.countDown();
                throw e;
            }
            return JSON.nullNode();
        };
        ObjectNode reply = TestReplies.step(session.execute(
                new StepRequest("""
                import rlm_harness as h
                a = h.KERNEL.callbacks.submit("slow", {})
                h.KERNEL.callbacks.call("slow", {})
                """, Duration.ofSeconds(3), StepExtras.of(null, slow, null), CallContext.NONE)));
        assertThat(reply.path("status").asText()).isEqualTo("interrupted");
        assertThat(reply.path("message").asText()).contains("all variables are intact");
        assertThat(started.get()).isEqualTo(2);
        assertThat(interrupted.await(5, TimeUnit.SECONDS)).isTrue();
        ObjectNode after = run("""
                try:
                    a.result()
                except h.CallbackError as e:
                    print(e.code)
                """, HostCallbacks.NONE);
        assertThat(after.path("stdout").asText()).isEqualTo("ABANDONED\n");
    }

    @Test
    void theClientsCancellationInterruptsCodeWaitingForAnAnswer() throws Exception {
        CountDownLatch waiting = new CountDownLatch(1);
        CountDownLatch interrupted = new CountDownLatch(1);
        HostCallbacks slow = (kind, request) -> {
            waiting.countDown();
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                interrupted.countDown();
                throw e;
            }
            return JSON.nullNode();
        };
        CallContext request = CallContext.create();
        Thread.ofVirtual().start(() -> {
            try {
                waiting.await();
                request.cancel();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        ObjectNode reply = run("h.KERNEL.callbacks.call('slow', {})", slow, request);
        assertThat(reply.path("status").asText()).isEqualTo("interrupted");
        assertThat(interrupted.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(run("print('after')", HostCallbacks.NONE).path("stdout").asText())
                .isEqualTo("after\n");
    }

    @Test
    void codeThatIgnoresTheInterruptIsKilledAndItsHandlersAbandoned() throws Exception {
        CountDownLatch interrupted = new CountDownLatch(1);
        HostCallbacks slow = (kind, request) -> {
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                interrupted.countDown();
                throw e;
            }
            return JSON.nullNode();
        };
        ObjectNode reply = TestReplies.step(session.execute(
                new StepRequest("""
                import rlm_harness as h
                while True:
                    try:
                        h.KERNEL.callbacks.call("slow", {})
                    except BaseException:
                        pass
                """, Duration.ofSeconds(1), StepExtras.of(null, slow, null), CallContext.NONE)));
        assertThat(reply.path("status").asText()).isEqualTo("killed");
        assertThat(interrupted.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(run("print('fresh')", HostCallbacks.NONE).path("stdout").asText())
                .isEqualTo("fresh\n");
    }

    @Test
    void aThreadThatOutlivesItsStepIsRefused() throws Exception {
        ObjectNode first = run("""
                import threading, time
                late = []
                def later():
                    time.sleep(0.3)
                    try:
                        h.KERNEL.callbacks.call("echo", {})
                    except h.CallbackError as e:
                        late.append(e.code)
                t = threading.Thread(target=later)
                t.start()
                """, (kind, request) -> JSON.nullNode());
        assertThat(first.path("status").asText()).isEqualTo("ok");
        Thread.sleep(800);
        assertThat(run("t.join(); print(late)", HostCallbacks.NONE)
                        .path("stdout")
                        .asText())
                .isEqualTo("['NOT_RUNNING']\n");
    }

    @Test
    void answersBeyondThePipeBufferAndLoadsAfterwardsKeepTheFramesAligned() {
        String big = "x".repeat(3 * 1024 * 1024);
        HostCallbacks callbacks = (kind, request) ->
                JSON.getNodeFactory().textNode(big + request.path("i").asInt());
        ObjectNode reply = run("""
                rs = [h.KERNEL.callbacks.submit("big", {"i": i}) for i in range(4)]
                print([len(p.result()) for p in rs], rs[3].result()[-1])
                """, callbacks);
        assertThat(reply.path("stdout").asText()).isEqualTo("[3145729, 3145729, 3145729, 3145729] 3\n");
        assertThat(TestReplies.load(session.loadData("small", "a\nb", DataType.LINES, CallContext.NONE))
                        .path("length")
                        .asInt())
                .isEqualTo(2);
        assertThat(run("print(small)", HostCallbacks.NONE).path("stdout").asText())
                .isEqualTo("['a', 'b']\n");
    }
}

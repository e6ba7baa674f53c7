package dev.rlmmcp.core;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What someone watching a session sees: it must never change the session it looks at. */
class SessionViewTest {

    @TempDir
    Path dir;

    private Sessions sessions;

    @BeforeEach
    void start() {
        sessions = new Sessions(new KernelFactory(TestSettings.in(dir), new ProcessLauncher(), new ObjectMapper()));
    }

    @AfterEach
    void stop() {
        sessions.close();
    }

    @Test
    void eachTraceEntryCarriesTheMemoryItLeft() {
        Session session = sessions.create("m", Limits.NONE);
        session.execute(StepRequest.of("a = 'x' * 100_000", Duration.ofSeconds(30)));
        session.execute(StepRequest.of("b = 'y' * 300_000", Duration.ofSeconds(30)));
        session.execute(StepRequest.of("del a, b", Duration.ofSeconds(30)));
        JsonNode steps = TestReplies.trace(session.trace(0, 10)).path("steps");
        long first = steps.path(0).path("memory_bytes").asLong();
        long second = steps.path(1).path("memory_bytes").asLong();
        assertThat(first).isGreaterThanOrEqualTo(100_000);
        assertThat(second).isGreaterThanOrEqualTo(first + 300_000);
        assertThat(steps.path(2).path("memory_bytes").asLong()).isLessThan(first);
    }

    @Test
    void viewingASessionWithoutAKernelStartsNoneAndLeavesItIdle() {
        Session session = sessions.create("cold", Limits.NONE);
        Instant idleSince = session.lastActive();
        ObjectNode view = TestReplies.variables(session.variablesView());
        assertThat(view.path("kernel_running").asBoolean()).isFalse();
        assertThat(view.path("variables")).isEmpty();
        session.trace(0, 10);
        session.summary();
        assertThat(session.hasKernel()).isFalse();
        assertThat(session.lastActive()).isEqualTo(idleSince);
    }

    @Test
    void variablesComeFromARunningKernelWithoutCountingAsActivity() {
        Session session = sessions.create("warm", Limits.NONE);
        session.execute(StepRequest.of("rows = list(range(1000))", Duration.ofSeconds(30)));
        Instant idleSince = session.lastActive();
        ObjectNode view = TestReplies.variables(session.variablesView());
        assertThat(view.path("source").asText()).isEqualTo("kernel");
        assertThat(view.path("variables")).anySatisfy(v -> {
            assertThat(v.path("name").asText()).isEqualTo("rows");
            assertThat(v.path("type").asText()).isEqualTo("list");
        });
        assertThat(session.lastActive()).isEqualTo(idleSince);
        assertThat(TestReplies.summary(session.summary()).path("steps").asInt()).isEqualTo(1);
    }

    @Test
    void anExpiredSessionShowsItsVariablesAsLastSeen() {
        Session session = sessions.create("gone", Limits.NONE);
        session.execute(StepRequest.of("kept = 1", Duration.ofSeconds(30)));
        session.variablesView();
        sessions.sweep(Duration.ZERO);
        assertThat(session.state()).isEqualTo(SessionState.EXPIRED);
        ObjectNode view = TestReplies.variables(session.variablesView());
        assertThat(view.path("source").asText()).isEqualTo("last_seen");
        assertThat(view.path("note").asText()).contains("not running");
        assertThat(view.path("variables").path(0).path("name").asText()).isEqualTo("kept");
        assertThat(session.hasKernel()).isFalse();
    }

    @Test
    void theTraceAndVariablesAnswerWhileCodeIsRunning() throws Exception {
        Session session = sessions.create("busy", Limits.NONE);
        session.execute(StepRequest.of("x = 1", Duration.ofSeconds(30)));
        session.variablesView();
        CompletableFuture<ObjectNode> slow = CompletableFuture.supplyAsync(() -> TestReplies.step(
                session.execute(StepRequest.of("import time\ntime.sleep(2)", Duration.ofSeconds(30)))));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!session.busy() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(session.busy()).isTrue();
        long started = System.nanoTime();
        ObjectNode trace = TestReplies.trace(session.trace(0, 10));
        ObjectNode vars = TestReplies.variables(session.variablesView());
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).isLessThan(500);
        assertThat(trace.path("trace_length").asInt()).isEqualTo(1);
        assertThat(vars.path("source").asText()).isEqualTo("last_seen");
        assertThat(vars.path("note").asText()).contains("running");
        assertThat(slow.get(30, TimeUnit.SECONDS).path("status").asText()).isEqualTo("ok");
        assertThat(TestReplies.trace(session.trace(0, 10)).path("trace_length").asInt())
                .isEqualTo(2);
    }
}

package dev.rlmmcp.base;

import dev.rlmmcp.core.StepStatus;
import dev.rlmmcp.core.TestReplies;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.TestSettings;
import dev.rlmmcp.kernel.KernelFactory;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@SuppressWarnings("try")
class CancellationTest {

    @TempDir
    Path dir;

    @Test
    void cancellingARequestRunsTheActionRegisteredOnItsThreadOnce() {
        AtomicInteger runs = new AtomicInteger();
        try (Cancellation.Request served = Cancellation.serve("c1", 7);
                Cancellation.Registration registration = Cancellation.onCancel(runs::incrementAndGet)) {
            assertThat(Cancellation.cancel("c2", 7)).as("another connection's request 7").isFalse();
            assertThat(Cancellation.cancel("c1", 7L)).isTrue();
            assertThat(Cancellation.cancel("c1", 7.0)).isTrue();
            assertThat(runs).hasValue(1);
            assertThat(served.cancelled()).isTrue();
            assertThat(Cancellation.isCancelled("c1", 7)).isTrue();
        }
        assertThat(Cancellation.cancel("c1", 7)).as("ended requests are forgotten").isFalse();
        assertThat(Cancellation.isCancelled("c1", 7)).isFalse();
    }

    @Test
    void anActionRegisteredAfterTheCancellationRunsAtOnceAndOneWhoseRegistrationEndedNever() {
        AtomicInteger runs = new AtomicInteger();
        try (Cancellation.Request served = Cancellation.serve("c1", "a")) {
            Cancellation.onCancel(runs::incrementAndGet).close();
            Cancellation.cancel("c1", "a");
            assertThat(runs).hasValue(0);
            Cancellation.onCancel(runs::incrementAndGet).close();
            assertThat(runs).hasValue(1);
        }
    }

    @Test
    void withoutARequestServedOnThisThreadNothingIsRegistered() {
        AtomicInteger runs = new AtomicInteger();
        try (Cancellation.Registration registration = Cancellation.onCancel(runs::incrementAndGet)) {
            assertThat(Cancellation.cancel("c1", 1)).isFalse();
        }
        assertThat(runs).hasValue(0);
    }

    @Test
    void cancellingInterruptsTheRunningCodeAndKeepsTheVariables() throws Exception {
        try (Sessions sessions = new Sessions(new KernelFactory(TestSettings.in(dir), new ProcessLauncher(),
                new ObjectMapper()))) {
            Session session = sessions.resolve(null, "c1");
            assertThat(session.execute("kept = 42", Duration.ofSeconds(30), CallContext.NONE).status()).isEqualTo(StepStatus.OK);
            // the request's cancellation is handed down to the session as its CallContext
            CallContext request = CallContext.create();
            CompletableFuture<ObjectNode> spinning = CompletableFuture.supplyAsync(
                    () -> TestReplies.step(session.execute("while True: pass", Duration.ofSeconds(60), request)));
            Thread.sleep(500);
            long cancelled = System.nanoTime();
            request.cancel();
            assertThat(request.cancelled()).isTrue();
            ObjectNode reply = spinning.get(10, TimeUnit.SECONDS);
            assertThat(reply.path("status").asText()).isEqualTo("interrupted");
            assertThat(System.nanoTime() - cancelled).isLessThan(TimeUnit.SECONDS.toNanos(3));
            assertThat(session.execute("kept", Duration.ofSeconds(30), CallContext.NONE).exec().stdout()).isEqualTo("42\n");
        }
    }
}

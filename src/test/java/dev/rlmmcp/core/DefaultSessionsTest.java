package dev.rlmmcp.core;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.store.StateStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Default sessions end with their connection when they hold nothing, and stay reachable by id when they do. */
class DefaultSessionsTest {

    private static final Duration T = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private final List<Sessions> opened = new ArrayList<>();

    @AfterEach
    void stop() {
        opened.forEach(Sessions::close);
    }

    private Sessions server(boolean persisted) {
        Sessions sessions = new Sessions(
                new KernelFactory(TestSettings.in(dir), new ProcessLauncher(), new ObjectMapper()),
                persisted ? StateStore.open(dir.resolve("state"), Duration.ofHours(1)) : null);
        opened.add(sessions);
        return sessions;
    }

    private static List<String> ids(Sessions sessions) {
        return sessions.all().stream().map(Session::id).toList();
    }

    @Test
    void anEmptyDefaultSessionEndsWithItsConnection() {
        Sessions sessions = server(true);
        Session session = sessions.resolve(null, "c1");
        session.execute(StepRequest.of("print('nothing kept')", T));
        sessions.connectionClosed("c1");
        assertThat(ids(sessions)).doesNotContain(session.id());
        assertThat(session.hasKernel()).isFalse();
    }

    @Test
    void aDefaultSessionWithVariablesOutlivesItsConnectionAndAnotherConnectionUsesIt() {
        Sessions sessions = server(true);
        Session session = sessions.resolve(null, "c1");
        session.execute(StepRequest.of("x = 41", T));
        sessions.connectionClosed("c1");
        assertThat(ids(sessions)).contains(session.id());
        Session again = sessions.resolve(session.id(), "c2");
        assertThat(again).isSameAs(session);
        assertThat(again.execute(StepRequest.of("print(x + 1)", T)).exec().stdout())
                .isEqualTo("42\n");
        assertThat(sessions.resolve(null, "c2")).isNotSameAs(session);
    }

    @Test
    void aDefaultSessionWhoseVariablesWereDeletedEndsWithItsConnection() {
        Sessions sessions = server(false);
        Session session = sessions.resolve(null, "c1");
        session.execute(StepRequest.of("x = 1", T));
        session.execute(StepRequest.of("del x", T));
        sessions.connectionClosed("c1");
        assertThat(ids(sessions)).doesNotContain(session.id());
    }

    @Test
    void namedSessionsAndTheSharedDefaultOfALiveConnectionAreNotDroppedWhenIdle() {
        Sessions sessions = server(false);
        Session named = sessions.create("context", Limits.NONE);
        Session shared = sessions.resolve(null, "rpc");
        shared.execute(StepRequest.of("print(1)", T));
        sessions.sweep(Duration.ZERO);
        assertThat(ids(sessions)).contains(named.id(), shared.id());
    }

    @Test
    void aDefaultSessionBusyWhenItsConnectionEndsIsKeptThenRemovedByTheSweepIfItHoldsNothing() throws Exception {
        Sessions sessions = server(false);
        Session session = sessions.resolve(null, "c1");
        CompletableFuture<ObjectNode> slow = CompletableFuture.supplyAsync(
                () -> TestReplies.step(session.execute(StepRequest.of("__import__('time').sleep(1)", T))));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!session.busy() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        sessions.connectionClosed("c1");
        assertThat(ids(sessions)).contains(session.id());
        slow.get(30, TimeUnit.SECONDS);
        Session other = sessions.resolve(null, "c2");
        other.execute(StepRequest.of("y = 2", T));
        sessions.connectionClosed("c2");
        sessions.sweep(Duration.ZERO);
        assertThat(ids(sessions)).doesNotContain(session.id()).contains(other.id());
    }

    @Test
    void atShutdownTheEmptyDefaultSessionsOfOpenConnectionsAreNotKept() {
        Sessions first = server(true);
        Session empty = first.resolve(null, "stdio");
        empty.execute(StepRequest.of("print(1)", T));
        Session named = first.create("context", Limits.NONE);
        first.close();
        opened.remove(first);
        assertThat(ids(server(true))).contains(named.id()).doesNotContain(empty.id());
    }
}

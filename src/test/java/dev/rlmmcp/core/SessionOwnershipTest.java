package dev.rlmmcp.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.llm.LlmService;
import dev.rlmmcp.store.StateStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Sessions that run only what their {@link Ownership} says this node holds (cluster mode), with a fake one. */
class SessionOwnershipTest {

    private static final Duration T = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private final List<Sessions> opened = new ArrayList<>();
    private final List<StateStore> stores = new ArrayList<>();

    /** The cluster as one node sees it: what it holds, and which other node owns what (live or not). */
    static class FakeOwnership implements Ownership {
        final Set<String> held = ConcurrentHashMap.newKeySet();
        final Set<String> released = ConcurrentHashMap.newKeySet();
        final Map<String, String> others = new ConcurrentHashMap<>();
        final Set<String> deadNodes = ConcurrentHashMap.newKeySet();
        final List<Elsewhere> listed = new ArrayList<>();

        @Override
        public void claim(String sessionId) {
            held.add(sessionId);
        }

        @Override
        public boolean claimOffered(String sessionId) {
            if (held.contains(sessionId) || others.containsKey(sessionId)) {
                return false;
            }
            held.add(sessionId);
            return true;
        }

        @Override
        public boolean acquire(String sessionId) {
            if (held.contains(sessionId)) {
                return true;
            }
            String other = others.get(sessionId);
            if (other == null || deadNodes.contains(other)) {
                others.remove(sessionId);
                held.add(sessionId);
                return true;
            }
            return false;
        }

        @Override
        public boolean holds(String sessionId) {
            return held.contains(sessionId);
        }

        @Override
        public void release(String sessionId) {
            held.remove(sessionId);
            released.add(sessionId);
        }

        @Override
        public Optional<String> liveOwnerElsewhere(String sessionId) {
            String other = others.get(sessionId);
            return other == null || deadNodes.contains(other) ? Optional.empty() : Optional.of(other);
        }

        @Override
        public List<Elsewhere> elsewhere() {
            return listed;
        }

        void takenBy(String sessionId, String node) {
            held.remove(sessionId);
            others.put(sessionId, node);
        }
    }

    @AfterEach
    void stop() {
        opened.forEach(Sessions::close);
    }

    private Sessions node(Ownership ownership) {
        return node(ownership, "state");
    }

    private Sessions node(Ownership ownership, String stateDir) {
        stores.forEach(StateStore::flush);
        StateStore store = StateStore.open(dir.resolve(stateDir), Duration.ofHours(1));
        stores.add(store);
        KernelFactory kernels =
                new KernelFactory(TestSettings.in(dir, 1L << 30), new ProcessLauncher(), new ObjectMapper());
        Sessions sessions = new Sessions(
                kernels,
                LlmService.samplingOnly(kernels.json()),
                CompletableFuture.completedFuture(store),
                Limits.NONE,
                ownership);
        opened.add(sessions);
        return sessions;
    }

    private static String out(Session session, String code) {
        ObjectNode reply = TestReplies.step(session.execute(StepRequest.of(code, T)));
        assertThat(reply.path("error").isObject()).as(reply.toString()).isFalse();
        return reply.path("stdout").asText();
    }

    @Test
    void aNewSessionIsClaimedAndOneALiveOtherNodeTookIsRefusedNamingIt() {
        FakeOwnership ownership = new FakeOwnership();
        Sessions sessions = node(ownership);
        Session session = sessions.create("work", Limits.NONE);
        assertThat(ownership.held).containsExactly(session.id());
        out(session, "x = 41");

        ownership.takenBy(session.id(), "node-b");
        assertThatThrownBy(() -> sessions.get(session.id())).isInstanceOfSatisfying(RlmException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.SESSION_MOVED);
            assertThat(e.getMessage()).contains("node-b");
            assertThat(e.fix()).contains("routed to its owner");
        });
        assertThat(session.hasKernel()).as("a lost session's kernel stops").isFalse();
        assertThat(sessions.all()).isEmpty();
    }

    @Test
    void aSessionWhoseOwnerIsGoneIsTakenOverWithItsVariables() {
        FakeOwnership ownership = new FakeOwnership();
        Sessions sessions = node(ownership);
        Session session = sessions.create("work", Limits.NONE);
        out(session, "x = 41");
        assertThat(session.snapshotNow()).isNull();
        ownership.takenBy(session.id(), "node-b");
        assertThatThrownBy(() -> sessions.get(session.id())).isInstanceOf(RlmException.class);

        ownership.deadNodes.add("node-b");
        Session back = sessions.get(session.id());
        assertThat(ownership.held).contains(session.id());
        assertThat(out(back, "print(x + 1)")).isEqualTo("42\n");
    }

    @Test
    void aNewSessionTakesTheIdTheBalancerOffersUnlessTheClusterKnowsIt() {
        FakeOwnership ownership = new FakeOwnership();
        Sessions sessions = node(ownership);
        String offered = "s-0123456789abcdef0123456789abcdef";
        Session first = sessions.create("work", Limits.NONE, sessions.llm().defaults(), offered);
        assertThat(first.id()).isEqualTo(offered);
        assertThat(ownership.held).containsExactly(offered);

        Session again = sessions.create("work", Limits.NONE, sessions.llm().defaults(), offered);
        assertThat(again.id())
                .as("an id in use is never taken twice")
                .isNotEqualTo(offered)
                .startsWith("s-");
        ownership.others.put("s-ownedbyanothernode0000000000000", "node-b");
        assertThat(sessions.create("w", Limits.NONE, sessions.llm().defaults(), "s-ownedbyanothernode0000000000000")
                        .id())
                .isNotEqualTo("s-ownedbyanothernode0000000000000");
        Sessions single = node(Ownership.SINGLE_NODE, "single");
        assertThat(single.create("w", Limits.NONE, single.llm().defaults(), offered)
                        .id())
                .as("one node has no use for an offer")
                .isNotEqualTo(offered);
    }

    @Test
    void anUnknownIdIsNotFoundInTheCluster() {
        FakeOwnership ownership = new FakeOwnership() {
            @Override
            public boolean acquire(String sessionId) {
                return held.contains(sessionId);
            }
        };
        Sessions sessions = node(ownership);
        assertThatThrownBy(() -> sessions.get("s-nosuchsession"))
                .isInstanceOfSatisfying(
                        RlmException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.SESSION_NOT_FOUND));
    }

    @Test
    void fencingStopsEveryKernelAndDropsEverySession() {
        FakeOwnership ownership = new FakeOwnership();
        Sessions sessions = node(ownership);
        Session a = sessions.create("a", Limits.NONE);
        Session b = sessions.create("b", Limits.NONE);
        out(a, "x = 1");
        out(b, "y = 2");
        sessions.fence();
        assertThat(sessions.all()).isEmpty();
        assertThat(a.hasKernel()).isFalse();
        assertThat(b.hasKernel()).isFalse();
    }

    @Test
    void aHandoverSavesReleasesAndDropsEachSessionThenRefusesNewOnes() {
        FakeOwnership ownership = new FakeOwnership();
        Sessions sessions = node(ownership);
        Session session = sessions.create("work", Limits.NONE);
        out(session, "x = 'kept'");
        sessions.handOver(Duration.ofSeconds(20));
        assertThat(ownership.released).containsExactly(session.id());
        assertThat(sessions.all()).isEmpty();
        assertThatThrownBy(() -> sessions.create("new", Limits.NONE))
                .isInstanceOfSatisfying(
                        RlmException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.SESSION_MOVED));

        Sessions next = node(new FakeOwnership());
        assertThat(out(next.get(session.id()), "print(x)")).isEqualTo("kept\n");
    }

    @Test
    void theListingOfSessionsElsewhereComesFromTheirRecords() {
        FakeOwnership first = new FakeOwnership();
        Sessions one = node(first);
        Session session = one.create("theirs", Limits.NONE);
        out(session, "x = 1");
        stores.forEach(StateStore::flush);
        String record =
                stores.getFirst().database().find(session.id(), 1).orElseThrow().record();

        FakeOwnership ownership = new FakeOwnership();
        ownership.listed.add(new Ownership.Elsewhere(session.id(), "node-a", true, record));
        ownership.listed.add(new Ownership.Elsewhere("s-norecordyet", "node-a", true, null));
        Sessions other = node(ownership, "other");
        List<OwnedElsewhere> listed = other.elsewhere();
        assertThat(listed).hasSize(1);
        assertThat(listed.getFirst().ownerNode()).isEqualTo("node-a");
        assertThat(listed.getFirst().summary().name()).isEqualTo("theirs");
        assertThat(listed.getFirst().summary().steps()).isEqualTo(1);
        assertThat(node(Ownership.SINGLE_NODE).elsewhere()).isEmpty();
    }
}

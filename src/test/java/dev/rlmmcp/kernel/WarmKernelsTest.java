package dev.rlmmcp.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.Limits;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.StepRequest;
import dev.rlmmcp.core.TestReplies;
import dev.rlmmcp.core.TestSettings;
import dev.rlmmcp.kernel.process.BwrapLauncher;
import dev.rlmmcp.kernel.process.KernelLauncher;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.store.SnapshotPrune;
import dev.rlmmcp.store.StateStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A session's kernel taken from the warm ones is what a kernel started for it would be: fresh
 * globals, its own snapshot directory (a restored session's snapshot in it), and the pool refills.
 * Run in the default sandbox where there is one.
 */
class WarmKernelsTest {

    /** Seconds since this process started, as the kernel itself reads it. */
    private static final String AGE = """
            with open('/proc/self/stat') as _f, open('/proc/uptime') as _u:
                _s = _f.read()
                print(round(float(_u.read().split()[0]) - int(_s[_s.rindex(')') + 2:].split()[19]) / 100, 2))
            del _f, _u, _s
            """;

    private static final String GLOBALS = "print(sorted(k for k in globals()))";

    @TempDir
    Path dir;

    private final List<Sessions> open = new ArrayList<>();

    @AfterEach
    void stop() {
        open.forEach(Sessions::close);
    }

    private static KernelLauncher launcher(Path dir) {
        return BwrapLauncher.detect(dir.resolve("runtime"), Settings.DEFAULT_DISK_BYTES, SnapshotPrune::prune)
                .<KernelLauncher>map(l -> l)
                .orElseGet(ProcessLauncher::new);
    }

    private KernelFactory factory() {
        return new KernelFactory(TestSettings.in(dir), launcher(dir), new ObjectMapper());
    }

    /** Sessions kept in {@code state}, with kernels kept warm for them once {@code warm}. */
    private Sessions sessions(Path state, KernelFactory kernels, boolean warm) {
        StateStore store = StateStore.open(state, Duration.ofHours(1));
        Sessions sessions = new Sessions(kernels, store);
        open.add(sessions);
        if (warm) {
            kernels.keepWarm(store.snapshots().root(), store.directory());
        }
        return sessions;
    }

    private static void awaitWarm(KernelFactory kernels, int count) throws InterruptedException {
        for (int i = 0; i < 300 && kernels.warmKernels() < count; i++) {
            Thread.sleep(50);
        }
        assertThat(kernels.warmKernels()).isEqualTo(count);
    }

    private static String out(Session session, String code) {
        ObjectNode reply = TestReplies.step(session.execute(StepRequest.of(code, Duration.ofSeconds(30))));
        assertThat(reply.path("status").asText()).as(reply.toString()).isEqualTo("ok");
        return reply.path("stdout").asText();
    }

    @Test
    void aNewSessionGetsAKernelStartedBeforeItWithFreshGlobalsAndItsOwnSnapshotDirectory() throws Exception {
        Path state = dir.resolve("state");
        KernelFactory kernels = factory();
        Sessions sessions = sessions(state, kernels, true);
        awaitWarm(kernels, 2);
        Thread.sleep(1000);

        Session first = sessions.create("first", Limits.NONE);
        assertThat(Double.parseDouble(out(first, AGE).strip())).isGreaterThan(0.8);
        out(first, "secret = 'first session data'\nimport json");
        assertThat(first.snapshotNow())
                .as("written before the reply: nothing left to write")
                .isNull();
        assertThat(state.resolve("snapshots").resolve(first.id()).resolve("manifest.json"))
                .exists();
        first.close();
        sessions.delete(first.id());

        Session second = sessions.create("second", Limits.NONE);
        String globals = out(second, GLOBALS);
        assertThat(globals).doesNotContain("secret", "json");
        awaitWarm(kernels, 2);
        try (Stream<Path> spares = Files.list(state.resolve("snapshots").resolve(".warm"))) {
            assertThat(spares.toList())
                    .hasSize(2)
                    .allSatisfy(spare -> assertThat(spare).isEmptyDirectory());
        }

        Sessions cold = sessions(
                dir.resolve("cold"), new KernelFactory(TestSettings.in(dir), launcher(dir), new ObjectMapper()), false);
        Session coldSession = cold.create("cold", Limits.NONE);
        assertThat(out(coldSession, GLOBALS)).isEqualTo(globals);
        out(coldSession, "kept = 1");
        assertThat(coldSession.snapshotNow())
                .as("written before the reply: nothing left to write")
                .isNull();
        assertThat(dir.resolve("cold")
                        .resolve("snapshots")
                        .resolve(coldSession.id())
                        .resolve("manifest.json"))
                .exists();
    }

    @Test
    void aRestoredSessionGetsAWarmKernelWithItsSnapshot() throws Exception {
        Path state = dir.resolve("state");
        Sessions before = sessions(state, factory(), false);
        Session session = before.create("kept", Limits.NONE);
        out(session, "data = list(range(1000))\ndef total():\n    return sum(data)");
        session.snapshotNow();
        String id = session.id();
        before.close();
        open.remove(before);

        KernelFactory kernels = factory();
        Sessions after = sessions(state, kernels, true);
        awaitWarm(kernels, 2);
        Thread.sleep(1000);
        Session restored = after.get(id);
        assertThat(out(restored, "print(total())")).isEqualTo("499500\n");
        assertThat(Double.parseDouble(out(restored, AGE).strip())).isGreaterThan(0.8);
        assertThat(state.resolve("snapshots").resolve(id + ".claim")).doesNotExist();
        assertThat(state.resolve("snapshots").resolve(id).resolve("manifest.json"))
                .exists();
    }

    @Test
    void atFullCapacityTheKernelOfASessionIdleLongEnoughMakesWayForAWarmOneAndItsVariablesComeBack() throws Exception {
        Pool pool = threeKernels(Duration.ofMillis(500));
        Session idle = pool.used("idle", "kept = 41");
        Thread.sleep(600);
        Session busy = pool.used("busy", "x = 1");
        awaitWarm(pool.kernels(), 2);
        assertThat(idle.hasKernel()).as("the idle session's kernel made way").isFalse();
        assertThat(busy.hasKernel()).isTrue();
        assertThat(pool.kernels().sessionKernels()).isEqualTo(1);

        assertThat(out(idle, "print(kept)")).isEqualTo("41\n");
    }

    @Test
    void aSessionActiveLessThanTheIdleTimeKeepsItsKernelAndThePoolStaysShort() throws Exception {
        Pool pool = threeKernels(Duration.ofHours(1));
        Session first = pool.used("first", "kept = 41");
        Session second = pool.used("second", "x = 1");
        Thread.sleep(2500);
        assertThat(pool.kernels().warmKernels()).isEqualTo(1);
        assertThat(first.hasKernel()).isTrue();
        assertThat(second.hasKernel()).isTrue();
    }

    @Test
    void aSessionHoldingAVariableNoSnapshotCanHoldKeepsItsKernelForTheWarmOnes() throws Exception {
        Pool pool = threeKernels(Duration.ofMillis(500));
        Session holder = pool.used("holder", "pending = (i for i in range(3))");
        Thread.sleep(600);
        pool.used("other", "x = 1");
        Thread.sleep(2500);
        assertThat(holder.hasKernel()).as("a generator would be lost").isTrue();
        assertThat(out(holder, "print(next(pending))")).isEqualTo("0\n");
    }

    @Test
    void aBurstOfNewSessionsGrowsThePoolSoThatTheNextBurstFindsItsKernelsStartedAndAnIdlePoolShrinksBack()
            throws Exception {
        KernelFactory kernels = factory();
        StateStore store = StateStore.open(dir.resolve("state"), Duration.ofHours(1));
        Sessions sessions = new Sessions(kernels, store);
        open.add(sessions);
        kernels.keepWarm(
                store.snapshots().root(),
                store.directory(),
                Duration.ofHours(1),
                new WarmKernels.Growth(6, Duration.ofSeconds(5), Duration.ofSeconds(2)));
        awaitWarm(kernels, 2);

        for (int i = 0; i < 6; i++) {
            Session child = sessions.create("first-" + i, Limits.NONE);
            out(child, "x = 1");
            sessions.delete(child.id());
        }
        assertThat(kernels.warmTarget()).isEqualTo(6);
        awaitWarm(kernels, 6);
        Thread.sleep(1000);

        // each kernel of the second burst was started a second or more before it was claimed
        for (int i = 0; i < 6; i++) {
            Session child = sessions.create("second-" + i, Limits.NONE);
            assertThat(Double.parseDouble(out(child, AGE).strip()))
                    .as("kernel %d of the burst", i)
                    .isGreaterThan(0.8);
            sessions.delete(child.id());
        }

        // no burst for a while: the pool halves back to --warm-kernels, its surplus kernels stopped
        for (int i = 0; i < 400 && (kernels.warmTarget() > 2 || kernels.budget().kernels() > 2); i++) {
            Thread.sleep(50);
        }
        assertThat(kernels.warmTarget()).isEqualTo(2);
        assertThat(kernels.warmKernels()).isEqualTo(2);
        assertThat(kernels.budget().kernels()).isEqualTo(2);
    }

    /** Sessions on at most three kernels, theirs and the warm ones together. */
    private record Pool(KernelFactory kernels, Sessions sessions) {
        /** A new session that has run {@code code}, once the pool is full again (or can be no fuller). */
        Session used(String name, String code) throws InterruptedException {
            Session session = sessions.create(name, Limits.NONE);
            out(session, code);
            for (int i = 0; i < 40 && kernels.warmKernels() < 2; i++) {
                Thread.sleep(50);
            }
            return session;
        }
    }

    /**
     * {@link Pool} of three kernels, two kept warm (ready when this returns), a session's kernel making
     * way for a warm one once idle {@code idle}.
     */
    private Pool threeKernels(Duration idle) throws InterruptedException {
        KernelFactory kernels =
                new KernelFactory(withMaxKernels(TestSettings.in(dir), 3), launcher(dir), new ObjectMapper());
        StateStore store = StateStore.open(dir.resolve("state"), Duration.ofHours(1));
        Sessions sessions = new Sessions(kernels, store);
        open.add(sessions);
        kernels.keepWarm(store.snapshots().root(), store.directory(), idle);
        awaitWarm(kernels, 2);
        return new Pool(kernels, sessions);
    }

    private static Settings withMaxKernels(Settings s, int maxKernels) {
        return new Settings(
                s.python(),
                s.dataRoot(),
                s.runtimeDir(),
                s.memoryLimitBytes(),
                s.cleanupThreshold(),
                s.cleanupTarget(),
                s.outputCap(),
                s.defaultTimeout(),
                s.maxTimeout(),
                s.interruptGrace(),
                s.kernelStartTimeout(),
                s.idleTimeout(),
                s.importPolicy(),
                new Capacity(maxKernels, 0, 2, Capacity.DEFAULT_FIRST_KERNEL_UID, Capacity.DEFAULT_KERNEL_UIDS),
                s.diskLimitBytes());
    }
}

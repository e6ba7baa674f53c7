package dev.rlmmcp.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.core.TestSettings;
import dev.rlmmcp.kernel.channel.Kernel;
import dev.rlmmcp.kernel.channel.KernelReply;
import dev.rlmmcp.kernel.process.BwrapLauncher;
import dev.rlmmcp.kernel.process.KernelLauncher;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.kernel.protocol.ExecResult;
import dev.rlmmcp.kernel.protocol.KernelRequest;
import dev.rlmmcp.store.SnapshotPrune;
import dev.rlmmcp.store.StateStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kernels that are used and closed soon after (a child RLM's) wait in line for a place at capacity
 * instead of being refused, and a closed one's place goes to the next in line. Real kernels, in the
 * default sandbox where there is one.
 */
class QueuedKernelsTest {

    @TempDir
    Path dir;

    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : open.reversed()) {
            c.close();
        }
    }

    private KernelFactory factory(int maxKernels, int warm) {
        Settings s = TestSettings.in(dir);
        Settings settings = new Settings(
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
                new Capacity(maxKernels, 0, warm, Capacity.DEFAULT_FIRST_KERNEL_UID, Capacity.DEFAULT_KERNEL_UIDS),
                s.diskLimitBytes());
        KernelLauncher launcher = BwrapLauncher.detect(
                        dir.resolve("runtime"), Settings.DEFAULT_DISK_BYTES, SnapshotPrune::prune)
                .<KernelLauncher>map(l -> l)
                .orElseGet(ProcessLauncher::new);
        KernelFactory kernels = new KernelFactory(settings, launcher, new ObjectMapper());
        open.add(kernels);
        return kernels;
    }

    @Test
    void sixtyFourKernelsAskedForAtOnceWithMaxKernelsEightAllStartInTurn() throws Exception {
        KernelFactory kernels = factory(8, 2);
        StateStore store = StateStore.open(dir.resolve("state"), Duration.ofHours(1));
        Path root = store.snapshots().root();
        kernels.keepWarm(root, store.directory());
        AtomicInteger most = new AtomicInteger();
        List<CompletableFuture<String>> children = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            String id = "child-" + i;
            children.add(CompletableFuture.supplyAsync(
                    () -> {
                        try (Kernel kernel =
                                kernels.start(id, root.resolve(id), store.directory(), Duration.ofMinutes(2))) {
                            most.accumulateAndGet(kernels.budget().kernels(), Math::max);
                            KernelReply<ExecResult> reply = kernel.call(
                                    new KernelRequest.Exec("import time\ntime.sleep(1)\nprint('" + id + "')", null),
                                    Duration.ofSeconds(30),
                                    Duration.ofSeconds(1));
                            return reply.ok()
                                    ? reply.body().stdout().strip()
                                    : reply.refusal().message();
                        } catch (Exception e) {
                            return e.toString();
                        }
                    },
                    Thread::startVirtualThread));
        }
        for (int i = 0; i < 64; i++) {
            assertThat(children.get(i).get(5, TimeUnit.MINUTES)).isEqualTo("child-" + i);
        }
        assertThat(most.get()).isLessThanOrEqualTo(8);
        assertThat(kernels.budget().waiting()).isZero();
    }

    @Test
    void aClosedKernelsPlaceIsFreeWhenCloseReturnsAndGoesToTheNextInLine() throws Exception {
        KernelFactory kernels = factory(2, 0);
        Kernel second = kernels.start("second", null, null, Duration.ofMinutes(1));
        open.add(second);
        Kernel gone = kernels.start("gone", null, null, Duration.ofMinutes(1));
        gone.close();
        assertThat(kernels.budget().kernels())
                .as("its place is free when close returns")
                .isEqualTo(1);

        Kernel first = kernels.start("first", null, null, Duration.ofMinutes(1));
        CompletableFuture<Kernel> third = CompletableFuture.supplyAsync(
                () -> kernels.start("third", null, null, Duration.ofMinutes(1)), Thread::startVirtualThread);
        for (int i = 0; i < 200 && kernels.budget().waiting() == 0; i++) {
            Thread.sleep(10);
        }
        assertThat(kernels.budget().waiting()).isEqualTo(1);
        first.close();
        long closed = System.nanoTime();
        while (kernels.budget().waiting() > 0 && System.nanoTime() - closed < TimeUnit.SECONDS.toNanos(5)) {
            Thread.onSpinWait();
        }
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closed))
                .as("ms from close to the next in line's place")
                .isLessThan(100);
        open.add(third.get(30, TimeUnit.SECONDS));
        assertThat(kernels.budget().kernels()).isEqualTo(2);
    }
}

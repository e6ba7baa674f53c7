package dev.rlmmcp.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.TestSettings;
import dev.rlmmcp.kernel.process.KernelLauncher;
import dev.rlmmcp.kernel.process.KernelUids;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class KernelBudgetTest {

    private static final long MIB = 1L << 20;

    /** What each slot holds, as a test sets it (a slot not set holds what a fresh kernel does). */
    private final Map<KernelBudget.Slot, Long> held = new ConcurrentHashMap<>();

    private KernelBudget budget(int kernels, long bytes) {
        return new KernelBudget(kernels, bytes, slot -> held.getOrDefault(slot, KernelBudget.START_BYTES), 300, 0);
    }

    @Test
    void countsKernelsUntilTheMostAllowedThenRefusesWithCapacityAndTheFix() {
        KernelBudget budget = budget(3, 0);
        List<KernelBudget.Slot> slots = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            slots.add(budget.acquire());
        }
        assertThat(budget.kernels()).isEqualTo(3);
        assertThatThrownBy(budget::acquire).isInstanceOfSatisfying(RlmException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.CAPACITY);
            assertThat(e.getMessage()).contains("3 kernels run", "--max-kernels");
            assertThat(e.fix()).contains("rlm_delete_session", "--max-kernels");
        });
        slots.get(0).release();
        slots.get(0).release();
        assertThat(budget.kernels()).isEqualTo(2);
        budget.acquire();
        assertThat(budget.kernels()).isEqualTo(3);
    }

    @Test
    void aWarmKernelTakesOnlyRoomNoSessionsKernelIsWaitingFor() throws Exception {
        KernelBudget budget = budget(2, 0);
        KernelBudget.Slot first = budget.tryAcquire();
        KernelBudget.Slot session = budget.acquire();
        assertThat(first).isNotNull();
        assertThat(budget.tryAcquire()).isNull();

        // a session's kernel waits for room, an idle one being stopped: the room is its own
        CountDownLatch asked = new CountDownLatch(1);
        budget.releaseWith(idleFor -> {
            asked.countDown();
            return true;
        });
        var waiting = CompletableFuture.supplyAsync(budget::acquire);
        asked.await();
        session.release();
        assertThat(budget.tryAcquire()).isNull();
        assertThat(waiting.get(5, TimeUnit.SECONDS)).isNotNull();
        assertThat(budget.kernels()).isEqualTo(2);
    }

    @Test
    void anIdleKernelIsReleasedToMakeRoomBeforeAnyRefusal() {
        KernelBudget budget = budget(2, 0);
        List<KernelBudget.Slot> idle = new ArrayList<>(List.of(budget.acquire(), budget.acquire()));
        List<KernelBudget.Slot> released = new ArrayList<>();
        budget.releaseWith(idleFor -> {
            if (idle.isEmpty()) {
                return false;
            }
            KernelBudget.Slot slot = idle.remove(0);
            released.add(slot);
            // the process exits a little later, as a stopped kernel's does
            Thread.ofVirtual().start(() -> {
                sleep(50);
                slot.release();
            });
            return true;
        });
        budget.acquire();
        assertThat(released).hasSize(1);
        budget.acquire();
        assertThat(released).hasSize(2);
        assertThat(budget.kernels()).isEqualTo(2);
        assertThatThrownBy(budget::acquire).isInstanceOf(RlmException.class);
    }

    @Test
    void aKernelThatEndsWhileTheNewOneWaitsBrieflyGivesItsPlace() {
        KernelBudget budget = budget(1, 0);
        KernelBudget.Slot running = budget.acquire();
        Thread.ofVirtual().start(() -> {
            sleep(100);
            running.release();
        });
        budget.acquire();
        assertThat(budget.kernels()).isEqualTo(1);
    }

    @Test
    void kernelsThatMayWaitQueueInTurnPastTheBusyWaitAndEachGetsThePlaceOfOneThatEnds() throws Exception {
        KernelBudget budget = budget(2, 0);
        List<KernelBudget.Slot> running = new ArrayList<>(List.of(budget.acquire(), budget.acquire()));
        List<Integer> order = java.util.Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<KernelBudget.Slot>> queued = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            int n = i;
            queued.add(CompletableFuture.supplyAsync(
                    () -> {
                        KernelBudget.Slot slot = budget.acquire(java.time.Duration.ofSeconds(30));
                        order.add(n);
                        return slot;
                    },
                    Thread::startVirtualThread));
            awaitWaiting(budget, i + 1);
        }
        // longer than the 300 ms a session's kernel waits before it is refused
        Thread.sleep(800);
        assertThat(queued).noneMatch(CompletableFuture::isDone);
        for (int i = 0; i < 4; i++) {
            running.remove(0).release();
            running.add(queued.get(i).get(5, TimeUnit.SECONDS));
            assertThat(budget.kernels()).isEqualTo(2);
        }
        assertThat(order).containsExactly(0, 1, 2, 3);
        assertThat(budget.waiting()).isZero();
    }

    @Test
    void aQueuedKernelIsRefusedAfterItsWaitAndStopsWaitingWhenInterrupted() throws Exception {
        KernelBudget budget = budget(1, 0);
        budget.acquire();
        long start = System.nanoTime();
        assertThatThrownBy(() -> budget.acquire(java.time.Duration.ofMillis(600)))
                .isInstanceOfSatisfying(
                        RlmException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CAPACITY));
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(550L, 3000L);

        CompletableFuture<Throwable> stopped = new CompletableFuture<>();
        Thread waiter = Thread.ofVirtual().start(() -> {
            try {
                budget.acquire(java.time.Duration.ofMinutes(5));
                stopped.complete(null);
            } catch (RlmException e) {
                stopped.complete(Thread.currentThread().isInterrupted() ? e : new AssertionError("interrupt lost"));
            }
        });
        awaitWaiting(budget, 1);
        waiter.interrupt();
        assertThat(stopped.get(2, TimeUnit.SECONDS))
                .isInstanceOfSatisfying(
                        RlmException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERRUPTED));
        assertThat(budget.waiting()).isZero();
        assertThat(budget.kernels()).isEqualTo(1);
    }

    @Test
    void aWarmKernelGivesItsPlaceBeforeAnySessionsKernelIsStopped() {
        KernelBudget budget = budget(2, 0);
        KernelBudget.Slot warm = budget.tryAcquire();
        budget.acquire();
        List<String> asked = new ArrayList<>();
        budget.releaseWith(idle -> {
            asked.add("session");
            return false;
        });
        budget.spareWith(() -> {
            asked.add("warm");
            warm.release();
            return true;
        });
        budget.acquire();
        assertThat(asked).containsExactly("warm");
        assertThat(budget.kernels()).isEqualTo(2);
    }

    private static void awaitWaiting(KernelBudget budget, int count) throws InterruptedException {
        for (int i = 0; i < 200 && budget.waiting() < count; i++) {
            Thread.sleep(10);
        }
        assertThat(budget.waiting()).isEqualTo(count);
    }

    @Test
    void memoryIsWhatTheKernelsHoldAndAFreshKernelMustFit() {
        KernelBudget budget = budget(100, 1024 * MIB);
        KernelBudget.Slot big = budget.acquire();
        held.put(big, 900 * MIB);
        assertThat(budget.usedBytes()).isEqualTo(900 * MIB);
        assertThat(budget.over()).isFalse();
        KernelBudget.Slot small = budget.acquire();
        assertThat(budget.usedBytes()).isEqualTo(900 * MIB + KernelBudget.START_BYTES);
        held.put(small, 200 * MIB);
        assertThat(budget.over()).isTrue();
        assertThatThrownBy(budget::acquire).isInstanceOfSatisfying(RlmException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.CAPACITY);
            assertThat(e.getMessage()).contains("2 kernels hold", "--max-total-memory-mb");
        });
        big.release();
        assertThat(budget.over()).isFalse();
        budget.acquire();
    }

    @Test
    void noMemoryBudgetCountsOnlyKernels() {
        KernelBudget budget = budget(2, 0);
        held.put(budget.acquire(), 1L << 40);
        assertThat(budget.over()).isFalse();
        budget.acquire();
    }

    @Test
    void defaultsComeFromTheMachine() {
        assertThat(KernelBudget.defaultMaxKernels(32768, 256)).isEqualTo(64);
        assertThat(KernelBudget.defaultMaxKernels(100, 256)).isEqualTo(1);
        assertThat(KernelBudget.defaultMaxBytes(24L << 30)).isEqualTo(18L << 30);
        assertThat(KernelBudget.of(
                                new Capacity(3, 5 * MIB * 1024, 0, 1_000_000, 2), 256, 2, KernelBudget::residentBytes)
                        .maxKernels())
                .isEqualTo(2);
        KernelBudget derived = KernelBudget.of(Capacity.AUTO, 256, Integer.MAX_VALUE, KernelBudget::residentBytes);
        assertThat(derived.maxKernels()).isGreaterThanOrEqualTo(1);
        assertThat(derived.maxBytes()).isGreaterThan(0);
    }

    @Test
    void rlimitNprocOnlyWhereNoPidsCgroupCountsTheKernelAndItsUidIsItsOwn(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        KernelLauncher ownUid = new KernelLauncher() {
            @Override
            public String name() {
                return "own-uid";
            }

            @Override
            public dev.rlmmcp.kernel.process.KernelHandle start(dev.rlmmcp.kernel.process.KernelSpec spec) {
                throw new UnsupportedOperationException();
            }

            @Override
            public boolean isolatesUser() {
                return true;
            }
        };
        Settings settings = TestSettings.in(dir);
        assertThat(HostPolicy.rlimits(settings, ownUid, true)).doesNotContainKey("nproc");
        assertThat(HostPolicy.rlimits(settings, ownUid, false)).containsEntry("nproc", 256);
        assertThat(HostPolicy.rlimits(settings, new dev.rlmmcp.kernel.process.ProcessLauncher(), false))
                .doesNotContainKey("nproc");
    }

    @Test
    void kernelUidsAreHandedOutOnceEachAndReusedLast() {
        KernelUids uids = new KernelUids(2_000_000, 3);
        int a = uids.take();
        int b = uids.take();
        int c = uids.take();
        assertThat(List.of(a, b, c)).containsExactly(2_000_000, 2_000_001, 2_000_002);
        assertThat(uids.take()).isEqualTo(-1);
        uids.give(b);
        assertThat(uids.take()).isEqualTo(b);
        uids.give(a);
        uids.give(c);
        assertThat(uids.take()).isEqualTo(c);
        assertThat(uids.inUse()).isEqualTo(2);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

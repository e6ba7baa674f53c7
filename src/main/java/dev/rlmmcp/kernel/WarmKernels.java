package dev.rlmmcp.kernel;

import dev.rlmmcp.base.FileTrees;
import dev.rlmmcp.kernel.channel.Kernel;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kernels started ahead of need, in the configured sandbox with the configured limits, each with an
 * empty spare writable directory ({@link SpareDirectories}) and nothing else: no session's data, no
 * secret, no code run but the harness's own start. A new session's kernel is one of them, claimed:
 * its spare directory becomes the session's snapshot directory, and it takes the session's name.
 * Each claim starts a replacement in the background, within the kernel budget. When the budget is
 * full, the replacement takes the place of the kernel of the session idle longest, if it has been
 * idle {@link #IDLE_BEFORE_MAKING_ROOM} and keeps its variables in a snapshot: the next new session
 * would stop that kernel anyway, and would wait for it and for a cold start. A claim that finds none
 * ready but one starting waits for it, which is never longer than starting its own. A kernel that
 * fails to start warm is retried later, and meanwhile sessions start their own, which report why.
 */
final class WarmKernels implements AutoCloseable {

    /** Starts a kernel in {@code slot}, its writable directory {@code dir} (or none), the state directory hidden. */
    interface Starter {
        Kernel start(KernelBudget.Slot slot, String label, Path dir, Path hiddenDir) throws IOException;
    }

    private record Warm(Kernel kernel, Path dir) {
    }

    private static final Logger log = LoggerFactory.getLogger(WarmKernels.class);
    static final Duration RETRY_AFTER_FAILURE = Duration.ofSeconds(30);
    /** How long after a claim that leaves others ready the replacement starts. */
    static final Duration REFILL_DELAY = Duration.ofMillis(200);
    /** How long a session must have been idle before its kernel makes way for a warm one. */
    static final Duration IDLE_BEFORE_MAKING_ROOM = Duration.ofMinutes(1);

    private final int target;
    /** Where the spare directories live, beside the sessions' snapshot directories; null: kernels write nowhere. */
    private final Path spareRoot;
    private final Path hiddenDir;
    private final KernelBudget budget;
    private final Starter starter;
    private final Duration startTimeout;
    private final ScheduledExecutorService timer;
    private final Duration idleBeforeMakingRoom;
    private final AtomicBoolean makingRoom = new AtomicBoolean();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final ArrayDeque<Warm> ready = new ArrayDeque<>();
    private final AtomicInteger started = new AtomicInteger();
    private int starting;
    private long retryAt;
    private volatile boolean closed;

    WarmKernels(int target, Path spareRoot, Path hiddenDir, KernelBudget budget, Starter starter, Duration startTimeout,
            ScheduledExecutorService timer, Duration idleBeforeMakingRoom) throws IOException {
        this.target = target;
        this.spareRoot = spareRoot;
        this.hiddenDir = hiddenDir;
        this.budget = budget;
        this.starter = starter;
        this.startTimeout = startTimeout;
        this.timer = timer;
        this.idleBeforeMakingRoom = idleBeforeMakingRoom;
        this.retryAt = System.nanoTime();
        if (spareRoot != null) {
            SpareDirectories.clean(spareRoot);
        }
        refill();
        // room in the budget frees as kernels end, and a failed start is retried
        timer.scheduleWithFixedDelay(this::refill, 1, 1, TimeUnit.SECONDS);
    }

    /** True if this pool's kernels are started as one for {@code dir} and {@code hidden} would be. */
    boolean serves(Path dir, Path hidden) {
        return Objects.equals(hidden, hiddenDir)
                && (dir == null ? spareRoot == null : spareRoot != null && spareRoot.equals(dir.getParent()));
    }

    /**
     * A warm kernel, now {@code label}'s with its writable directory at {@code dir} (which keeps what
     * it held); null if none is ready or starting, or it could not be handed over.
     */
    Kernel claim(String label, Path dir) {
        while (true) {
            Warm warm = take();
            if (warm == null) {
                return null;
            }
            if (!warm.kernel().isAlive()) {
                discard(warm);
                continue;
            }
            try {
                warm.kernel().claim(label, dir == null ? null : SpareDirectories.adopt(warm.dir(), dir));
                return warm.kernel();
            } catch (IOException | RuntimeException e) {
                log.warn("session {}: a warm kernel could not be handed over ({}); starting one", label, e.toString());
                discard(warm);
                if (dir != null) {
                    try {
                        SpareDirectories.recover(dir);
                    } catch (IOException again) {
                        log.warn("session {}: {} not recovered: {}", label, dir, again.toString());
                    }
                }
                return null;
            }
        }
    }

    /** How many kernels are ready to be claimed. */
    int ready() {
        lock.lock();
        try {
            return ready.size();
        } finally {
            lock.unlock();
        }
    }

    /** How many kernels are ready or starting: the budget's places this pool holds. */
    int held() {
        lock.lock();
        try {
            return ready.size() + starting;
        } finally {
            lock.unlock();
        }
    }

    /** The next ready kernel, waiting for one being started if none is ready; null if none is either. */
    private Warm take() {
        lock.lock();
        try {
            long deadline = System.nanoTime() + startTimeout.toNanos();
            while (ready.isEmpty() && starting > 0 && !closed) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                changed.awaitNanos(left);
            }
            Warm warm = ready.poll();
            if (ready.isEmpty()) {
                refill();
            } else {
                // the replacement's start would take CPU from the claimed kernel's first call
                timer.schedule(this::refill, REFILL_DELAY.toMillis(), TimeUnit.MILLISECONDS);
            }
            return warm;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Starts kernels until {@code target} are ready or starting, as far as the budget has room; stops
     * ready ones while the kernels hold more memory than it allows (they go before any session's).
     */
    void refill() {
        Warm surplus = null;
        boolean full = false;
        lock.lock();
        try {
            if (!ready.isEmpty() && budget.over()) {
                surplus = ready.poll();
                return;
            }
            while (!closed && ready.size() + starting < target && System.nanoTime() - retryAt >= 0) {
                KernelBudget.Slot slot = budget.tryAcquire();
                if (slot == null) {
                    full = true;
                    return;
                }
                starting++;
                String label = "warm-" + started.incrementAndGet();
                Thread.ofVirtual().name("kernel-warming-" + label).start(() -> startOne(slot, label));
            }
        } finally {
            lock.unlock();
            if (surplus != null) {
                discard(surplus);
            }
            if (full) {
                makeRoom();
            }
        }
    }

    /**
     * In the background, a little later (not on the path of the claim that called for it): stops the
     * idlest session's kernel for a warm one, if one has been idle long enough, and refills.
     */
    private void makeRoom() {
        if (closed || !makingRoom.compareAndSet(false, true)) {
            return;
        }
        try {
            timer.schedule(() -> Thread.ofVirtual().name("kernel-warming-room").start(() -> {
                boolean released;
                try {
                    released = !closed && budget.releaseForWarm(idleBeforeMakingRoom);
                } finally {
                    makingRoom.set(false);
                }
                if (released) {
                    refill();
                }
            }), REFILL_DELAY.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopping) {
            makingRoom.set(false);
        }
    }

    private void startOne(KernelBudget.Slot slot, String label) {
        Path dir = null;
        Warm warm = null;
        try {
            dir = spareRoot == null ? null : SpareDirectories.create(spareRoot);
            warm = new Warm(starter.start(slot, label, dir, hiddenDir), dir);
        } catch (IOException | RuntimeException e) {
            slot.release();
            log.warn("cannot start a warm kernel ({}); sessions start their own, and warm ones are tried again in {} s",
                    e.getMessage(), RETRY_AFTER_FAILURE.toSeconds());
        }
        boolean kept = false;
        lock.lock();
        try {
            starting--;
            if (warm == null) {
                retryAt = System.nanoTime() + RETRY_AFTER_FAILURE.toNanos();
            } else if (!closed) {
                ready.add(warm);
                kept = true;
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        if (!kept) {
            discard(warm != null ? warm : new Warm(null, dir));
        }
    }

    private static void discard(Warm warm) {
        if (warm.kernel() != null) {
            warm.kernel().close();
        }
        if (warm.dir() != null) {
            try {
                FileTrees.deleteTree(warm.dir());
            } catch (IOException e) {
                log.debug("spare directory {} not removed: {}", warm.dir(), e.toString());
            }
        }
    }

    /** Stops the warm kernels and removes their directories; those still starting follow once started. */
    @Override
    public void close() {
        ArrayDeque<Warm> left;
        lock.lock();
        try {
            closed = true;
            left = new ArrayDeque<>(ready);
            ready.clear();
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        left.forEach(WarmKernels::discard);
    }
}

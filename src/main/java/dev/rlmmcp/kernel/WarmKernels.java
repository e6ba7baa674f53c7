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
 * <p>
 * The pool adapts to bursts (child RLMs, batches of run_python): when claims come faster than it
 * refills (one finds none ready), it keeps ready as many kernels as were claimed within
 * {@link Growth#window} (at least the configured floor, at most its ceiling), so that the next burst
 * of that size finds them started. A kernel start is mostly CPU: a few start at
 * once, as many as there are cores, since more at once would only make each claim wait longer for
 * the first. Once no burst that large has come for {@link Growth#hold}, the pool halves toward the
 * floor; it only grows into room no one waits for, and only up to the floor does it make a session's
 * kernel give way.
 */
final class WarmKernels implements AutoCloseable {

    /** Starts a kernel in {@code slot}, its writable directory {@code dir} (or none), the state directory hidden. */
    interface Starter {
        Kernel start(KernelBudget.Slot slot, String label, Path dir, Path hiddenDir) throws IOException;
    }

    private record Warm(Kernel kernel, Path dir) {}

    /**
     * How far the pool grows past its floor: up to {@code ceiling} kernels, as many as were claimed
     * within {@code window}; after {@code hold} without a burst that large, it halves.
     */
    record Growth(int ceiling, Duration window, Duration hold) {

        /**
         * Claims this close together are one burst: long enough for 20 claims that each wait for a
         * start on a busy machine, short enough that a claim every few seconds (which refills keep up
         * with) leaves the pool near its floor.
         */
        static final Duration WINDOW = Duration.ofSeconds(5);
        /** How long the pool keeps a burst's size: an RLM's next iteration comes after its model's answer. */
        static final Duration HOLD = Duration.ofMinutes(2);
        /** The most kernels a pool grows to, however large the budget. */
        static final int MOST = 32;

        /**
         * For {@code budget}: at most half its kernels, and an eighth of its memory at what a fresh
         * kernel is counted for (warm kernels hold ~14 MiB each, a session's may grow to its limit).
         */
        static Growth within(KernelBudget budget) {
            long byMemory = budget.maxBytes() == 0 ? MOST : budget.maxBytes() / 8 / KernelBudget.START_BYTES;
            return new Growth((int) Math.min(MOST, Math.min(budget.maxKernels() / 2, byMemory)), WINDOW, HOLD);
        }
    }

    private static final Logger log = LoggerFactory.getLogger(WarmKernels.class);
    static final Duration RETRY_AFTER_FAILURE = Duration.ofSeconds(30);
    /** How long after a claim that leaves others ready the replacement starts. */
    static final Duration REFILL_DELAY = Duration.ofMillis(200);
    /** How long a session must have been idle before its kernel makes way for a warm one. */
    static final Duration IDLE_BEFORE_MAKING_ROOM = Duration.ofMinutes(1);

    /** The configured number of kernels kept ready (--warm-kernels): the pool never shrinks below it. */
    private final int floor;

    private final Growth growth;
    /** How many kernels start at once. */
    private final int parallel;
    /** When the claims of the last {@link Growth#window} came (System.nanoTime). */
    private final ArrayDeque<Long> claims = new ArrayDeque<>();
    /** The largest burst of claims lately, and when it was last reached. */
    private int peak;

    private long peakAt;
    /** When a claim last found no kernel ready (claims came faster than refills), if one ever did. */
    private boolean missed;

    private long missedAt;
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

    WarmKernels(
            int floor,
            Growth growth,
            Path spareRoot,
            Path hiddenDir,
            KernelBudget budget,
            Starter starter,
            Duration startTimeout,
            ScheduledExecutorService timer,
            Duration idleBeforeMakingRoom)
            throws IOException {
        this.floor = floor;
        this.growth = growth;
        this.parallel = Math.max(2, Runtime.getRuntime().availableProcessors());
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
        this.peakAt = retryAt;
        budget.spareWith(this::giveBack);
        refill();
        // room in the budget frees as kernels end, a failed start is retried, and an idle pool shrinks
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

    /** How many kernels the pool keeps ready now: its floor, or more after a burst. */
    int target() {
        lock.lock();
        try {
            return target(System.nanoTime());
        } finally {
            lock.unlock();
        }
    }

    /**
     * The budget's kernels this pool does not hold (the sessions'), counted under the pool's lock: a refill
     * takes a place and counts it as starting in one step, which two separate reads could straddle.
     */
    int notHeld() {
        lock.lock();
        try {
            return budget.kernels() - ready.size() - starting;
        } finally {
            lock.unlock();
        }
    }

    /** The next ready kernel, waiting for one being started if none is ready; null if none is either. */
    private Warm take() {
        lock.lock();
        try {
            long now = System.nanoTime();
            claims.add(now);
            if (ready.isEmpty()) {
                missed = true;
                missedAt = now;
            }
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
     * How many kernels to keep ready or starting at {@code now}: the most claimed within a window
     * lately, within the floor and the ceiling. The pool grows only when claims came faster than it
     * refilled (one found none ready), and keeps its size while bursts that large come. Called
     * under the lock.
     */
    private int target(long now) {
        long window = growth.window().toNanos();
        while (!claims.isEmpty() && now - claims.peekFirst() > window) {
            claims.pollFirst();
        }
        if (claims.size() >= peak) {
            if (missed && now - missedAt <= window) {
                peak = claims.size();
            }
            peakAt = now;
        } else if (now - peakAt > growth.hold().toNanos()) {
            peak = Math.max(claims.size(), peak / 2);
            peakAt = now;
        }
        return Math.max(floor, Math.min(growth.ceiling(), peak));
    }

    /**
     * Starts kernels until the target are ready or starting, a few at a time and as far as the
     * budget has room; stops a ready one while the kernels hold more memory than the budget allows
     * (they go before any session's), or while the pool holds more than its target.
     */
    void refill() {
        Warm surplus = null;
        boolean full = false;
        lock.lock();
        try {
            long now = System.nanoTime();
            int target = target(now);
            if (!ready.isEmpty() && (budget.over() || ready.size() + starting > target)) {
                surplus = ready.pollLast();
                return;
            }
            if (ready.size() >= parallel && !claims.isEmpty() && now - claims.peekLast() < REFILL_DELAY.toNanos()) {
                // claims are coming and kernels are ready for them: starts now would take their CPU; the
                // refill that each claim schedules runs once they pause
                return;
            }
            while (!closed
                    && ready.size() + starting < target
                    && starting < parallel
                    && System.nanoTime() - retryAt >= 0) {
                KernelBudget.Slot slot = budget.tryAcquire();
                if (slot == null) {
                    // past the floor, the pool takes only free room: no session's kernel makes way for it
                    full = ready.size() + starting < floor;
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

    /** Stops a ready kernel, its place wanted for another: true if there was one. */
    private boolean giveBack() {
        Warm warm;
        lock.lock();
        try {
            warm = ready.pollLast();
        } finally {
            lock.unlock();
        }
        if (warm == null) {
            return false;
        }
        discard(warm);
        return true;
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
            timer.schedule(
                    () -> Thread.ofVirtual().name("kernel-warming-room").start(() -> {
                        boolean released;
                        try {
                            released = !closed && budget.releaseForWarm(idleBeforeMakingRoom);
                        } finally {
                            makingRoom.set(false);
                        }
                        if (released) {
                            refill();
                        }
                    }),
                    REFILL_DELAY.toMillis(),
                    TimeUnit.MILLISECONDS);
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
            log.warn(
                    "cannot start a warm kernel ({}); sessions start their own, and warm ones are tried again in {} s",
                    e.getMessage(),
                    RETRY_AFTER_FAILURE.toSeconds());
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
        } else {
            // the next one of a burst's refill starts as this one is done
            refill();
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

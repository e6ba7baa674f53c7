package dev.rlmmcp.kernel;

import dev.rlmmcp.base.Bytes;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.ToLongFunction;

/**
 * The server-wide budget for live kernels: how many may run at once, and how much memory they may
 * hold together, measured as the resident memory of each kernel's processes. Measured, not the sum
 * of their limits: each kernel may grow to 2 x --max-memory-mb + 1.5 GiB (3.5 GiB by default) for
 * transient copies, so committing that much per kernel would allow five kernels on a 24 GiB machine and
 * one on an 8 GiB laptop (with --ephemeral, a second session would be refused), while an idle kernel
 * holds ~25 MiB; what limits one kernel's growth is its own cgroup and rlimits. Measuring lets the
 * budget take back the memory that idle sessions hold. A kernel that would pass either bound first
 * makes idle kernels go, idlest first (their sessions are snapshotted and their variables come back
 * on their next call); if none is idle, it is refused with {@link ErrorCode#CAPACITY}. A running
 * kernel is never stopped to make room.
 */
public final class KernelBudget {

    /** Frees the kernel of the idlest session that can give it up without losing variables. */
    public interface Releaser {
        /**
         * Stops the kernel of the idlest session idle at least {@code idle}; true if one was stopped
         * (its place frees once its process has exited).
         */
        boolean releaseIdlest(Duration idle);
    }

    /** A place for one kernel: counted from {@link #acquire} until {@link #release}. */
    public final class Slot {
        private final AtomicBoolean given = new AtomicBoolean();
        private volatile Process process;
        private long held;
        private long measuredAt;

        /** The kernel's process, whose memory counts from now on. */
        void track(Process started) {
            process = started;
        }

        Process process() {
            return process;
        }

        /** What the kernel holds, measured at most once per {@link #measureEveryNanos}. */
        synchronized long held() {
            long now = System.nanoTime();
            if (measuredAt == 0 || now - measuredAt >= measureEveryNanos) {
                held = usage.applyAsLong(this);
                measuredAt = now == 0 ? 1 : now;
            }
            return held;
        }

        /** Gives the place back (once, however often it is called). */
        void release() {
            if (given.compareAndSet(false, true)) {
                KernelBudget.this.release(this);
            }
        }
    }

    /** A share of the host's pids kernels may take between them: the rest is the server's and the host's. */
    static final double HOST_PIDS_SHARE = 0.5;
    /** A share of the machine's memory kernels may hold between them. */
    static final double HOST_MEMORY_SHARE = 0.75;
    /** What a kernel is counted as holding before it is first measured: a little more than a fresh interpreter. */
    static final long START_BYTES = 32L << 20;

    private static final long RELEASE_WAIT_MS = 2_000;
    /** How long a kernel waits for one of the others to become idle before it is refused. */
    static final long BUSY_WAIT_MS = 3_000;

    private final long busyWaitMs;
    /** Kernels starting in a burst reuse each other's measurements this long (a measure is ~0.1 ms per kernel). */
    static final long MEASURE_EVERY_MS = 500;

    private final long measureEveryNanos;

    private final int maxKernels;
    private final long maxBytes;
    private final ToLongFunction<Slot> usage;
    private final Set<Slot> slots = ConcurrentHashMap.newKeySet();
    private volatile Releaser releaser = idle -> false;
    /** Gives back the place of a kernel started ahead of need, if one is ready: true if one was. */
    private volatile BooleanSupplier spare = () -> false;
    /** Callers of {@link #acquire} waiting for a place, first come first served; {@link #tryAcquire} leaves the room to them. */
    private final ArrayDeque<Object> queue = new ArrayDeque<>();

    /** {@code maxBytes} 0: memory is not budgeted; {@code usage}: what a kernel holds now. */
    KernelBudget(int maxKernels, long maxBytes, ToLongFunction<Slot> usage) {
        this(maxKernels, maxBytes, usage, BUSY_WAIT_MS, MEASURE_EVERY_MS);
    }

    KernelBudget(int maxKernels, long maxBytes, ToLongFunction<Slot> usage, long busyWaitMs, long measureEveryMs) {
        if (maxKernels < 1) {
            throw new IllegalArgumentException("at least one kernel, not " + maxKernels);
        }
        this.maxKernels = maxKernels;
        this.maxBytes = maxBytes;
        this.usage = usage;
        this.busyWaitMs = busyWaitMs;
        this.measureEveryNanos = TimeUnit.MILLISECONDS.toNanos(measureEveryMs);
    }

    /**
     * The budget {@code capacity} asks for, its zeros derived from this machine: as many kernels as
     * half the host's pids allow at {@code pidsPerKernel} each (and no more than {@code uidCap}), and
     * three quarters of its memory.
     */
    static KernelBudget of(Capacity capacity, int pidsPerKernel, int uidCap, ToLongFunction<Slot> usage) {
        int kernels = capacity.maxKernels() > 0 ? capacity.maxKernels() : defaultMaxKernels(hostPids(), pidsPerKernel);
        long bytes = capacity.maxTotalMemoryBytes() > 0
                ? capacity.maxTotalMemoryBytes()
                : defaultMaxBytes(machineMemoryBytes());
        return new KernelBudget(Math.min(kernels, uidCap), bytes, usage);
    }

    static int defaultMaxKernels(long hostPids, int pidsPerKernel) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, (long) (hostPids * HOST_PIDS_SHARE) / pidsPerKernel));
    }

    static long defaultMaxBytes(long machineBytes) {
        return Math.max(START_BYTES, (long) (machineBytes * HOST_MEMORY_SHARE));
    }

    /** Who stops idle kernels when the budget is full (the sessions, once they exist). */
    public void releaseWith(Releaser releaser) {
        this.releaser = releaser;
    }

    /** Who gives back a warm kernel's place when the budget is full: before any session's kernel goes. */
    void spareWith(BooleanSupplier spare) {
        this.spare = spare;
    }

    /**
     * A place for one more kernel, idle ones stopped first if need be. Throws CAPACITY when the
     * budget is full and no kernel is idle, after {@link #BUSY_WAIT_MS}.
     */
    Slot acquire() {
        return acquire(Duration.ofMillis(busyWaitMs));
    }

    /**
     * A place for one more kernel, in turn: callers get places in the order they asked. When there
     * is no room for this one and those ahead of it, a warm kernel gives its place, else the idlest
     * session's kernel (the session's snapshot keeps its variables). Waits up to {@code wait} for a
     * running kernel to end (each one stopped for it restarts that wait, as its process takes a
     * moment to exit), then throws CAPACITY; throws INTERRUPTED, the thread's interrupt kept, if
     * interrupted while it waits (one that need not wait is not stopped by an interrupt).
     */
    Slot acquire(Duration wait) {
        Object turn = new Object();
        synchronized (this) {
            queue.add(turn);
        }
        try {
            int released = 0;
            long giveUp = System.nanoTime() + wait.toNanos();
            while (true) {
                boolean roomAhead;
                synchronized (this) {
                    if (queue.peekFirst() == turn && fits()) {
                        queue.pollFirst();
                        Slot slot = new Slot();
                        slots.add(slot);
                        notifyAll();
                        return slot;
                    }
                    roomAhead = roomFor(turn);
                }
                if (!roomAhead
                        && released <= 2 * maxKernels
                        && (spare.getAsBoolean() || releaser.releaseIdlest(Duration.ZERO))) {
                    released++;
                    giveUp = Math.max(giveUp, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(busyWaitMs));
                    awaitTurn(turn, RELEASE_WAIT_MS);
                    continue;
                }
                // none idle now: a call about to end, or a snapshot being written, may free one in a moment
                long left = giveUp - System.nanoTime();
                if (left <= 0) {
                    throw refusal();
                }
                // not every change wakes this (a session becoming idle, memory measured anew): look again now and then
                awaitTurn(turn, Math.min(TimeUnit.NANOSECONDS.toMillis(left) + 1, 250));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw interrupted();
        } finally {
            synchronized (this) {
                if (queue.remove(turn)) {
                    notifyAll();
                }
            }
        }
    }

    /**
     * A place for one more kernel if there is room now and no session's kernel is waiting for one,
     * without stopping any; else null.
     */
    synchronized Slot tryAcquire() {
        if (!queue.isEmpty() || !fits()) {
            return null;
        }
        Slot slot = new Slot();
        slots.add(slot);
        return slot;
    }

    /**
     * Makes room for a kernel started ahead of need when the budget is full and no session waits for
     * a place: stops the kernel of the idlest session idle at least {@code idle}, and waits a little
     * for its place to free. True if one stopped.
     */
    boolean releaseForWarm(Duration idle) {
        synchronized (this) {
            if (!queue.isEmpty() || fits()) {
                return false;
            }
        }
        if (!releaser.releaseIdlest(idle)) {
            return false;
        }
        awaitRoom(RELEASE_WAIT_MS);
        return true;
    }

    /** True if the kernels hold more memory than the budget allows (idle ones should then go). */
    public boolean over() {
        return maxBytes > 0 && usedBytes() > maxBytes;
    }

    private synchronized void release(Slot slot) {
        slots.remove(slot);
        notifyAll();
    }

    /**
     * Waits up to {@code ms} for {@code turn} to be first in line with room for it (every place
     * given back and every caller leaving the line wakes it).
     */
    private synchronized void awaitTurn(Object turn, long ms) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        while (!(queue.peekFirst() == turn && fits())) {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (left <= 0) {
                return;
            }
            // memory is measured, not announced: look again at least every 50 ms
            wait(Math.min(left, 50));
        }
    }

    /** True if there is room for {@code turn} and for everyone ahead of it in line. */
    private boolean roomFor(Object turn) {
        int ahead = 0;
        for (Object other : queue) {
            if (other == turn) {
                break;
            }
            ahead++;
        }
        return slots.size() + ahead < maxKernels
                && (maxBytes == 0 || usedBytes() + (ahead + 1) * START_BYTES <= maxBytes);
    }

    private static RlmException interrupted() {
        return new RlmException(
                ErrorCode.INTERRUPTED,
                "stopped while waiting for a place for a kernel",
                null,
                "nothing to fix: the call was cancelled");
    }

    /** Waits a little for a place: a stopped kernel's process to exit, or any kernel to end. */
    private synchronized void awaitRoom(long ms) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        try {
            while (!fits()) {
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0) {
                    return;
                }
                wait(Math.min(left, 50));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private boolean fits() {
        return slots.size() < maxKernels && (maxBytes == 0 || usedBytes() + START_BYTES <= maxBytes);
    }

    private synchronized RlmException refusal() {
        String limit = slots.size() >= maxKernels
                ? "%d kernels run, the most --max-kernels (RLM_MAX_KERNELS) allows".formatted(slots.size())
                : ("%d kernels hold %s, and another would pass the %s that --max-total-memory-mb "
                                + "(RLM_MAX_TOTAL_MEMORY_MB) allows")
                        .formatted(slots.size(), Bytes.human(usedBytes()), Bytes.human(maxBytes));
        return new RlmException(
                ErrorCode.CAPACITY,
                "the server is at capacity: " + limit
                        + ", and none of them is idle with its variables in a snapshot, to be stopped for this one",
                null,
                "end sessions you no longer need with rlm_delete_session, or retry once a running call has "
                        + "finished; the operator can raise --max-kernels / --max-total-memory-mb");
    }

    public int kernels() {
        return slots.size();
    }

    /** How many kernels wait in line for a place. */
    public synchronized int waiting() {
        return queue.size();
    }

    public int maxKernels() {
        return maxKernels;
    }

    /** What the kernels hold now: each one's resident memory (a kernel still starting counts as {@link #START_BYTES}). */
    public long usedBytes() {
        long used = 0;
        for (Slot slot : slots) {
            used += slot.held();
        }
        return used;
    }

    /** The most the kernels may hold together; 0: not budgeted. */
    public long maxBytes() {
        return maxBytes;
    }

    /**
     * The resident memory of a kernel's processes (the launcher's, the sandbox's and Python's, and
     * their children), found through /proc/PID/task/PID/children: cheap, where walking every process
     * of the host (ProcessHandle.descendants) is not.
     */
    static long residentBytes(Slot slot) {
        Process process = slot.process();
        return process == null ? START_BYTES : residentPages(process.pid(), 0) * PAGE_BYTES;
    }

    private static final long PAGE_BYTES = 4096;

    private static long residentPages(long pid, int depth) {
        long pages = residentPages(pid);
        if (depth < 8) {
            try {
                for (String line : Files.readAllLines(
                        Path.of("/proc", Long.toString(pid), "task", Long.toString(pid), "children"))) {
                    for (String child : line.trim().split(" ")) {
                        if (!child.isEmpty()) {
                            pages += residentPages(Long.parseLong(child), depth + 1);
                        }
                    }
                }
            } catch (IOException | RuntimeException e) {
                // gone meanwhile, or no children file: the process alone
            }
        }
        return pages;
    }

    private static long residentPages(long pid) {
        try {
            List<String> statm = Files.readAllLines(Path.of("/proc", Long.toString(pid), "statm"));
            return statm.isEmpty() ? 0 : Long.parseLong(statm.get(0).split(" ")[1]);
        } catch (IOException | RuntimeException e) {
            return 0; // gone meanwhile
        }
    }

    /**
     * The pids this host has: the lowest of pid_max, threads-max, and the server's own pids cgroup
     * limit and RLIMIT_NPROC where they are set.
     */
    static long hostPids() {
        long pids = Math.min(
                number(Path.of("/proc/sys/kernel/pid_max"), 32768),
                number(Path.of("/proc/sys/kernel/threads-max"), Long.MAX_VALUE));
        for (Path own : new Path[] {Path.of("/sys/fs/cgroup/pids.max"), Path.of("/sys/fs/cgroup/pids/pids.max")}) {
            pids = Math.min(pids, number(own, Long.MAX_VALUE));
        }
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
                if (line.startsWith("Max processes")) {
                    String soft =
                            line.substring("Max processes".length()).trim().split("\\s+")[0];
                    if (!soft.equals("unlimited") && !"root".equals(System.getProperty("user.name"))) {
                        pids = Math.min(pids, Long.parseLong(soft));
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // no limits to read: pid_max stands
        }
        return pids;
    }

    /** Physical memory, or the server's container or cgroup limit where that is lower (as the JDK sees it). */
    static long machineMemoryBytes() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getTotalMemorySize();
        }
        return 8L << 30;
    }

    private static long number(Path file, long otherwise) {
        try {
            // by lines: readString may get a short read from procfs
            String text = String.join("", Files.readAllLines(file)).trim();
            return text.equals("max") ? otherwise : Long.parseLong(text);
        } catch (IOException | RuntimeException e) {
            return otherwise;
        }
    }
}

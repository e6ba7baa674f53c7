package dev.rlmmcp.transport;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Gives the heap back to the machine after large requests. A 100 MiB inline load makes G1 commit
 * several hundred MiB of heap, which it keeps until a collection it has no other reason to run. So
 * once the last large request in flight has ended, a full collection is asked for ({@code System.gc()}),
 * which compacts the heap and uncommits what it does not need: one pause of a few tens of ms after a
 * request that took far longer. The heap is the process's, hence the static state.
 */
public final class HeapReturn {

    /** Requests from this size on are followed by a collection. */
    static final long LARGE_BYTES = 16L << 20;

    private static final long DELAY_MS = 200;
    private static final AtomicInteger inFlight = new AtomicInteger();
    private static final AtomicBoolean due = new AtomicBoolean();
    private static final AtomicInteger collections = new AtomicInteger();
    private static final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon().name("heap-return").factory());

    private HeapReturn() {}

    /** Marks a request of {@code bytes} as being handled until the scope is closed. */
    public static Scope handling(long bytes) {
        if (bytes < LARGE_BYTES) {
            return Scope.NONE;
        }
        inFlight.incrementAndGet();
        AtomicBoolean closed = new AtomicBoolean();
        return () -> {
            if (closed.compareAndSet(false, true)
                    && inFlight.decrementAndGet() == 0
                    && due.compareAndSet(false, true)) {
                timer.schedule(HeapReturn::collect, DELAY_MS, TimeUnit.MILLISECONDS);
            }
        };
    }

    /** How many collections were asked for so far (for tests). */
    static int collections() {
        return collections.get();
    }

    private static void collect() {
        due.set(false);
        if (inFlight.get() == 0) {
            collections.incrementAndGet();
            System.gc();
        }
    }

    /** A request being handled; closing it more than once counts once. */
    public interface Scope extends AutoCloseable {
        Scope NONE = () -> {};

        @Override
        void close();
    }
}

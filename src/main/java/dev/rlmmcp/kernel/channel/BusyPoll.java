package dev.rlmmcp.kernel.channel;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Waiting on a kernel by polling its pipe for a moment before blocking in the read. On a VM a thread
 * asleep in a read takes tens of microseconds to wake, on each side of the pipe: more than the harness
 * takes for a small cell. Polling pays only while a CPU is free for it, so it is done only while calls
 * to kernels are in flight on at most half the CPUs; a request then also asks the harness to poll for
 * the next one for as long after its reply.
 */
final class BusyPoll {

    /** How long a wait polls: longer than a small cell's round trip, short against a slow one. */
    static final long MICROS = 200;

    private static final int FREE_CPUS = Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
    private static final AtomicInteger calls = new AtomicInteger();

    @FunctionalInterface
    interface Readiness {
        boolean ready() throws IOException;
    }

    private BusyPoll() {}

    /** A call to a kernel starts: counted until {@link #callEnded()}. */
    static void callStarted() {
        calls.incrementAndGet();
    }

    static void callEnded() {
        calls.decrementAndGet();
    }

    /** How long a wait may poll now, in microseconds: {@link #MICROS}, or 0 while the CPUs are busy with other calls. */
    static long micros() {
        return calls.get() <= FREE_CPUS ? MICROS : 0;
    }

    /** Polls {@code readiness} for up to {@link #micros()}: whether it became ready meanwhile. */
    static boolean poll(Readiness readiness) throws IOException {
        long micros = micros();
        if (micros == 0) {
            return false;
        }
        long until = System.nanoTime() + micros * 1000;
        while (!readiness.ready()) {
            if (System.nanoTime() - until > 0) {
                return false;
            }
            Thread.onSpinWait();
        }
        return true;
    }
}

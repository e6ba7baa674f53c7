package dev.rlmmcp.kernel.process;

import java.util.function.LongSupplier;

/**
 * A token bucket for log lines: {@code burst} lines at once, then {@code perSecond} a second. Not
 * thread-safe: one per relay thread.
 */
final class LogBucket {

    private final double burst;
    private final double perNano;
    private final LongSupplier clock;
    private double tokens;
    private long last;

    LogBucket(int burst, double perSecond, LongSupplier nanoClock) {
        this.burst = burst;
        this.perNano = perSecond / 1e9;
        this.clock = nanoClock;
        this.tokens = burst;
        this.last = nanoClock.getAsLong();
    }

    /** Takes one token if there is one. */
    boolean tryTake() {
        long now = clock.getAsLong();
        tokens = Math.min(burst, tokens + (now - last) * perNano);
        last = now;
        if (tokens >= 1) {
            tokens -= 1;
            return true;
        }
        return false;
    }
}

package dev.rlmmcp.transport.http.ui;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Failed logins per client address: after {@code limit} of them within a window, further attempts
 * from that address are refused until the window ends, so the key cannot be guessed at speed.
 */
final class LoginThrottle {

    private static final int ADDRESSES_KEPT = 10_000;

    private record Window(long startedMs, int failures) {}

    private final int limit;
    private final long windowMs;
    private final LongSupplier clockMs;
    private final Map<String, Window> failures = new ConcurrentHashMap<>();

    LoginThrottle(int limit, Duration window, LongSupplier clockMs) {
        this.limit = limit;
        this.windowMs = window.toMillis();
        this.clockMs = clockMs;
    }

    /** Seconds this address must wait before it may try again; 0 if it may try now. */
    long retryAfterSeconds(String address) {
        Window window = failures.get(address);
        if (window == null) {
            return 0;
        }
        long left = window.startedMs() + windowMs - clockMs.getAsLong();
        if (left <= 0) {
            failures.remove(address, window);
            return 0;
        }
        return window.failures() >= limit ? (left + 999) / 1000 : 0;
    }

    void failed(String address) {
        long now = clockMs.getAsLong();
        if (failures.size() >= ADDRESSES_KEPT) {
            failures.values().removeIf(w -> w.startedMs() + windowMs <= now);
        }
        failures.merge(
                address,
                new Window(now, 1),
                (old, first) ->
                        old.startedMs() + windowMs <= now ? first : new Window(old.startedMs(), old.failures() + 1));
    }

    void succeeded(String address) {
        failures.remove(address);
    }
}

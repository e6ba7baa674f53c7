package dev.rlmmcp.transport.peer;

import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The idempotency keys ({@link PeerProxy#REQUEST_ID}) of the forwarded requests this node admitted lately. A
 * forwarding node sends a request again only when the owner cannot have received it, so a key seen twice means a
 * second delivery of one call to this process: it is refused, never run again. Kept for {@value #KEEP_MS} ms,
 * far longer than a forwarding node retries one request (its patience is seconds).
 */
public final class Deliveries {

    static final long KEEP_MS = 10 * 60_000L;
    private static final int MAX_KEYS = 100_000;

    private final Map<String, Long> seen = new ConcurrentHashMap<>();

    /** Whether {@code key} is new here (then remembered); true for a request without one. */
    public boolean first(String key) {
        if (key == null || key.isEmpty()) {
            return true;
        }
        long now = System.currentTimeMillis();
        if (seen.size() >= MAX_KEYS) {
            forgetOlderThan(now - KEEP_MS);
        }
        return seen.putIfAbsent(key, now) == null;
    }

    private void forgetOlderThan(long cutoff) {
        for (Iterator<Long> at = seen.values().iterator(); at.hasNext(); ) {
            if (at.next() < cutoff) {
                at.remove();
            }
        }
        if (seen.size() >= MAX_KEYS) {
            seen.clear(); // a flood of keys within KEEP_MS: memory before memory of old deliveries
        }
    }
}

package dev.rlmmcp.cluster;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The requests this node serves itself, counted from their admission until they end, so that a session
 * is saved and given up only once no request already let in can still reach it: a request admitted just
 * before a handover would otherwise run on the session after its last snapshot, and its reply report a
 * change the next owner never sees. Admission and closing take the same lock, so none slips between.
 */
final class Admissions {

    private static final String NO_SESSION = "";

    private final Map<String, Integer> running = new HashMap<>();
    private boolean closed;

    /** Admits a request for {@code sessionId} (null: none), or returns null if this node no longer takes it. */
    synchronized Router.Admission admit(String sessionId) {
        String key = sessionId == null ? NO_SESSION : sessionId;
        if (closed) {
            return null;
        }
        running.merge(key, 1, Integer::sum);
        return () -> done(key);
    }

    private synchronized void done(String key) {
        running.computeIfPresent(key, (k, n) -> n == 1 ? null : n - 1);
        notifyAll();
    }

    /** Admits nothing more (the handover at SIGTERM has begun). */
    synchronized void close() {
        closed = true;
    }

    /**
     * Waits up to {@code timeout} until no admitted request for the session, nor one that names no
     * session (a 2025 MCP session's call names its session only in its body), still runs; false if some do.
     */
    synchronized boolean awaitQuiet(String sessionId, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (running.containsKey(sessionId) || running.containsKey(NO_SESSION)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                wait(Math.max(1, left / 1_000_000));
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}

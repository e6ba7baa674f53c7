package dev.rlmmcp.cluster;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * The requests this node serves itself, counted from their admission until they end, so that a session
 * is saved and given up only once no request already let in can still reach it: a request admitted just
 * before a handover would otherwise run on the session after its last snapshot, and its reply report a
 * change the next owner never sees. Admission and closing take the same lock, so none slips between.
 */
final class Admissions {

    private static final String NO_SESSION = "";

    private final Map<String, Integer> running = new HashMap<>();
    private final Set<String> closedSessions = new HashSet<>();
    private boolean closed;

    /** Admits a request for {@code sessionId} (null: none), or returns null if this node no longer takes it. */
    synchronized Router.Admission admit(String sessionId) {
        String key = sessionId == null ? NO_SESSION : sessionId;
        if (closed || closedSessions.contains(key)) {
            return null;
        }
        running.merge(key, 1, Integer::sum);
        return () -> done(key);
    }

    private synchronized void done(String key) {
        running.computeIfPresent(key, (k, n) -> n == 1 ? null : n - 1);
        notifyAll();
    }

    /** Admits nothing more, and waits up to {@code timeout} for what was admitted; false if some still run. */
    synchronized boolean closeAll(Duration timeout) {
        closed = true;
        return await(null, timeout);
    }

    /** Admits no more requests for the session, and waits up to {@code timeout} for those admitted. */
    synchronized boolean closeSession(String sessionId, Duration timeout) {
        closedSessions.add(sessionId);
        return await(sessionId, timeout);
    }

    /** Admits requests for the session again (it was handed over, or could not be). */
    synchronized void reopen(String sessionId) {
        closedSessions.remove(sessionId);
    }

    private boolean await(String sessionId, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (sessionId == null ? !running.isEmpty() : running.containsKey(sessionId)) {
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

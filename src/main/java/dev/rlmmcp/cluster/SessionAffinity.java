package dev.rlmmcp.cluster;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves a session to the node its requests arrive at. A session is created where the request that made
 * it landed; with a balancer hashing on the session id, every later request may then arrive at another
 * node, which forwards each one here. Once {@value #IN_A_ROW} requests in a row came forwarded by the
 * same node and none directly, this node hands the session over (its changes stored, released) and that
 * node takes it on its next request, so a hashed session costs one move instead of a hop per call. Round
 * robin never moves one: its requests arrive here directly and from several nodes.
 */
final class SessionAffinity {

    private static final Logger log = LoggerFactory.getLogger(SessionAffinity.class);
    static final int IN_A_ROW = 3;
    private static final int TRACKED = 100_000;
    private static final Duration MOVE_TIMEOUT = Duration.ofSeconds(10);

    /** Where the last requests for a session came from: {@code from} a peer's node id, null directly. */
    private record Arrivals(String from, int count) {}

    private final Map<String, Arrivals> recent = new ConcurrentHashMap<>();
    private final Set<String> moving = ConcurrentHashMap.newKeySet();
    /** What hands a session over: {@code Sessions::moveOut}; false if it was not here or busy. */
    interface Mover {
        boolean moveOut(String sessionId, Duration timeout);
    }

    private volatile Mover mover;

    void start(Mover sessions) {
        mover = sessions;
    }

    /** Whether the session is being handed over now (its requests wait, then go to its next owner). */
    boolean moving(String sessionId) {
        return moving.contains(sessionId);
    }

    /** A request for {@code sessionId} was served here, forwarded by {@code forwardedBy} (null: directly). */
    void served(String sessionId, String forwardedBy) {
        Mover served = mover;
        if (served == null || sessionId == null || moving.contains(sessionId)) {
            return;
        }
        if (recent.size() > TRACKED) {
            recent.clear(); // a bound, not an eviction policy: a session only needs its last few requests
        }
        Arrivals now = recent.merge(
                sessionId,
                new Arrivals(forwardedBy, 1),
                (last, one) -> Objects.equals(last.from(), one.from()) ? new Arrivals(one.from(), last.count() + 1) : one);
        if (forwardedBy == null || now.count() < IN_A_ROW || !moving.add(sessionId)) {
            return;
        }
        recent.remove(sessionId);
        Thread.ofVirtual().name("move-" + sessionId).start(() -> {
            try {
                if (served.moveOut(sessionId, MOVE_TIMEOUT)) {
                    log.info("session {}: handed over, its requests arrive at node {}", sessionId, forwardedBy);
                }
            } catch (RuntimeException e) {
                log.warn("session {}: not handed over to node {}: {}", sessionId, forwardedBy, e.toString());
            } finally {
                moving.remove(sessionId);
            }
        });
    }
}

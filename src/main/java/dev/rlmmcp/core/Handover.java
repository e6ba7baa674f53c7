package dev.rlmmcp.core;

import dev.rlmmcp.store.StateStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a cluster node lets go of its sessions: at once and writing nothing when it has lost its lease
 * ({@link #fence}), or in order at SIGTERM ({@link #handOver}): each session's last snapshot stored,
 * its record committed, then given up, so that the next node resumes it with every variable.
 */
final class Handover {

    private static final Logger log = LoggerFactory.getLogger(Sessions.class);

    private Handover() {}

    /** Every kernel stopped at once, without a snapshot: another node may own these sessions by now. */
    static void fence(List<Session> all) {
        stop(all);
        log.warn(
                "fenced: this node's lease could not be renewed in time; {} sessions dropped from memory, "
                        + "their kernels stopped, nothing written (another node resumes them from their last snapshot)",
                all.size());
    }

    /**
     * Each session on a thread of its own: its call under way finishes (up to {@code timeout}), its
     * changes are snapshotted and its record committed, then it is released at once (so that another
     * node takes it over without waiting for the others) and its kernel stopped.
     */
    static void handOver(List<Session> all, StateStore store, Ownership ownership, Duration timeout) {
        long started = System.nanoTime();
        Instant deadline = Instant.now().plus(timeout);
        List<Thread> threads = all.stream()
                .map(session -> Thread.ofVirtual()
                        .name("handover-" + session.id())
                        .start(() -> handOver(session, store, ownership, deadline)))
                .toList();
        for (Thread thread : threads) {
            try {
                thread.join(Duration.between(Instant.now(), deadline).plusSeconds(1));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        log.info(
                "handover: {} sessions saved and released in {} ms",
                all.size(),
                (System.nanoTime() - started) / 1_000_000);
    }

    private static void handOver(Session session, StateStore store, Ownership ownership, Instant deadline) {
        if (session.agentSteps().stoppingWhileSuspended()) {
            ownership.release(session.id());
            stop(List.of(session));
            return;
        }
        if (!ownership.quiesce(session.id(), Duration.between(Instant.now(), deadline))) {
            log.warn("session {}: requests still running at handover; saved as it is", session.id());
        }
        try {
            if (store != null) {
                Map<String, String> unsaved = session.saveBeforeStop(deadline);
                if (!unsaved.isEmpty()) {
                    log.warn("session {}: not saved at handover: {}", session.id(), unsaved);
                }
                store.flush();
            }
        } catch (RuntimeException e) {
            log.warn("session {}: its snapshot at handover: {}", session.id(), e.toString());
        }
        try {
            ownership.release(session.id());
        } catch (RuntimeException e) {
            log.warn("session {}: not released (its owner's lease ends anyway): {}", session.id(), e.toString());
        }
        stop(List.of(session));
    }

    /** Stops the sessions' kernels at once, without a snapshot, a call under way or not. */
    static void stop(List<Session> all) {
        all.parallelStream().forEach(session -> {
            try {
                session.stopKernel();
            } catch (RuntimeException e) {
                log.warn("session {}: stopping its kernel: {}", session.id(), e.toString());
            }
        });
    }
}

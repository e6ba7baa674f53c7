package dev.rlmmcp.core;

import dev.rlmmcp.kernel.channel.Kernel;
import dev.rlmmcp.store.StateStore;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session giving up its kernel: when idle (expired, or to make room for another session's), at
 * shutdown (what changed snapshotted first, then stopped) and when deleted. Each takes the lock only
 * as far as it may wait: an idle release never waits on a call, a shutdown no longer than its deadline.
 */
final class KernelRelease {

    private static final Logger log = LoggerFactory.getLogger(KernelRelease.class);

    private final String id;
    private final SessionLock lock;
    private final SessionKernel kernel;
    private final Snapshots snapshots;
    private final KernelCalls calls;
    private final SessionLedger ledger;
    private final StateStore store;

    KernelRelease(
            String id,
            SessionLock lock,
            SessionKernel kernel,
            Snapshots snapshots,
            KernelCalls calls,
            SessionLedger ledger,
            StateStore store) {
        this.id = id;
        this.lock = lock;
        this.kernel = kernel;
        this.snapshots = snapshots;
        this.calls = calls;
        this.ledger = ledger;
        this.store = store;
    }

    /**
     * Releases an idle session's kernel (its variables go with it); returns false if a call is
     * running. A finalized session keeps its state; any other becomes expired.
     */
    boolean expire() {
        try (var held = lock.tryHold()) {
            return held != null && releaseKernel(true);
        }
    }

    /**
     * Gives up an idle kernel to make room for another session's (as {@link #expire} does with a
     * store: a snapshot first, the variables back on the next call). A snapshot being written is
     * waited out (at most {@link #SNAPSHOT_WAIT}), so that the idlest session goes, not the next one.
     * False without a store, whose variables would be lost, or if a call is running or there is no kernel;
     * unless {@code losing}, also if a variable is one no snapshot can hold (it would be lost).
     */
    boolean idle(boolean losing) {
        if (store == null) {
            return false;
        }
        try (var held = lock.tryHoldUnlessCall(SNAPSHOT_WAIT)) {
            return held != null && releaseKernel(losing);
        }
    }

    /** How long {@link #idle} waits for a snapshot being written before it passes the session by. */
    static final Duration SNAPSHOT_WAIT = Duration.ofSeconds(2);

    /** {@link #expire} and {@link #idle}, under the lock. */
    private boolean releaseKernel(boolean losing) {
        if (store != null) {
            Kernel current = kernel.current();
            if (current == null || !current.isAlive()) {
                // a dead kernel stays, so that the next call replaces it and names what was lost
                return false;
            }
            calls.snapshot();
            if (!losing && !snapshots.unsavedNow("").isEmpty()) {
                return false;
            }
            kernel.close();
            ledger.memoryBytes = 0;
            ledger.save();
            return true;
        }
        kernel.close();
        if (ledger.state != SessionState.FINALIZED) {
            ledger.state = SessionState.EXPIRED;
        }
        ledger.memoryBytes = 0;
        return true;
    }

    /**
     * At shutdown, before any kernel stops: snapshots what changed, waiting until {@code deadline} for
     * a call under way to end. Returns what is not saved, each name with why (empty: everything is).
     */
    Map<String, String> saveBeforeStop(Instant deadline) {
        if (store == null) {
            return Map.of();
        }
        try (var held = lock.tryHold(Duration.between(Instant.now(), deadline))) {
            if (held == null) {
                log.warn(
                        "session {}: a call was still running at the shutdown deadline; what it changes is not "
                                + "saved",
                        id);
                return snapshots.unsavedNow("changed before a call still running at the shutdown deadline");
            }
            snapshots.cancel();
            Kernel k = kernel.current();
            boolean dead = k != null && !k.isAlive();
            calls.snapshot();
            return snapshots.unsavedNow(dead ? "the kernel had died" : "the snapshot failed");
        }
    }

    /**
     * Stops the kernel at shutdown, after {@link #saveBeforeStop}: without waiting for a call still
     * running past the deadline (its kernel is stopped under it).
     */
    void stopKernel() {
        try (var held = lock.tryHold()) {
            snapshots.cancel();
            kernel.close();
        }
    }

    /** Stops the kernel, snapshotting first what changed (at shutdown). */
    void close() {
        try (var held = lock.hold()) {
            snapshots.cancel();
            calls.snapshot();
            kernel.close();
        }
    }

    /** Stops the kernel without a snapshot: the session is being deleted. */
    void discard() {
        try (var held = lock.hold()) {
            snapshots.cancel();
            snapshots.forget();
            kernel.close();
        }
    }
}

package dev.rlmmcp.core;

import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.base.Text;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One call at a time on a session. A caller never waits on another call (or a snapshot) longer than
 * its own time limit, and no more than {@link #MAX_WAITING} callers wait at once, so that calls
 * piling up on one busy session tie up neither threads nor time without end; either way the caller
 * gets a TIMEOUT saying why. Every way in returns a {@link Held}, closed by a try-with-resources,
 * so that every path out releases the lock by construction.
 */
final class SessionLock extends ReentrantLock {

    /** The most callers that may wait on one busy session at once; more are refused at once. */
    static final int MAX_WAITING = 16;

    private final String sessionId;
    /** Whether the holder is a call (taken by {@link #acquire}), not a snapshot or a look at the variables. */
    private volatile boolean call;
    /** Why a call is refused at once rather than wait (a step waits for the agent), or null: see {@link #refuseWhile}. */
    private volatile java.util.function.Supplier<RlmException> refusal = () -> null;

    SessionLock(String sessionId) {
        this.sessionId = sessionId;
    }

    /** The lock, held until closed; a way in that did not get the lock returns null (a try skips closing it). */
    interface Held extends AutoCloseable {
        @Override
        void close();
    }

    /** Takes the lock for a call, waiting at most {@code wait} (see {@link #acquire}). */
    Held call(Duration wait) {
        acquire(wait);
        return this::unlock;
    }

    /** Takes the lock, waiting as long as it takes (a snapshot, a look at the variables, a close). */
    Held hold() {
        lock();
        return this::unlock;
    }

    /** The lock if it is free now, else null. */
    Held tryHold() {
        return tryLock() ? this::unlock : null;
    }

    /** The lock if it comes free within {@code wait}, else null (also if the wait is interrupted). */
    Held tryHold(Duration wait) {
        try {
            return tryLock(Math.max(0, wait.toMillis()), TimeUnit.MILLISECONDS) ? this::unlock : null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** The lock unless a call holds it or comes to (see {@link #tryLockUnlessCall}), else null. */
    Held tryHoldUnlessCall(Duration wait) {
        return tryLockUnlessCall(wait) ? this::unlock : null;
    }

    /** Calls that would wait are refused at once with what {@code why} gives, while it gives one. */
    void refuseWhile(java.util.function.Supplier<RlmException> why) {
        this.refusal = why;
    }

    /** Takes the lock, waiting at most {@code wait}; re-entrant for the thread that holds it. */
    void acquire(Duration wait) {
        if (isHeldByCurrentThread()) {
            lock();
            call = true;
            return;
        }
        RlmException refused = refusal.get();
        if (refused != null) {
            throw refused;
        }
        if (getQueueLength() >= MAX_WAITING) {
            throw busy("%d calls are already waiting for it".formatted(getQueueLength()));
        }
        boolean locked;
        try {
            locked = tryLock(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            locked = false;
        }
        if (!locked) {
            throw busy("this call waited %s s, its own time limit, for the call under way to end"
                    .formatted(Text.seconds(wait)));
        }
        call = true;
    }

    @Override
    public void unlock() {
        if (getHoldCount() == 1) {
            call = false;
        }
        super.unlock();
    }

    /** Whether a call holds the lock now (a snapshot being written does not count). */
    boolean callRunning() {
        return call;
    }

    /**
     * Takes the lock if no call holds it or comes to: waits out a snapshot being written, at most
     * {@code wait}, but gives up as soon as a call runs.
     */
    boolean tryLockUnlessCall(Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        try {
            while (!call) {
                if (tryLock(20, TimeUnit.MILLISECONDS)) {
                    return true;
                }
                if (System.nanoTime() - deadline > 0) {
                    return false;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return false;
    }

    private RlmException busy(String why) {
        return new RlmException(
                ErrorCode.TIMEOUT,
                "session " + sessionId + " is busy with another call (or its " + "snapshot): " + why
                        + "; this call did not run",
                "session_id",
                "retry when the running call has ended (rlm_sessions shows it as busy), or use another session");
    }
}

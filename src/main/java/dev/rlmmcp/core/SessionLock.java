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
 * gets a TIMEOUT saying why.
 */
final class SessionLock extends ReentrantLock {

    /** The most callers that may wait on one busy session at once; more are refused at once. */
    static final int MAX_WAITING = 16;

    private final String sessionId;

    SessionLock(String sessionId) {
        this.sessionId = sessionId;
    }

    /** Takes the lock, waiting at most {@code wait}; re-entrant for the thread that holds it. */
    void acquire(Duration wait) {
        if (isHeldByCurrentThread()) {
            lock();
            return;
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
    }

    private RlmException busy(String why) {
        return new RlmException(ErrorCode.TIMEOUT, "session " + sessionId + " is busy with another call (or its "
                + "snapshot): " + why + "; this call did not run", "session_id",
                "retry when the running call has ended (rlm_sessions shows it as busy), or use another session");
    }
}

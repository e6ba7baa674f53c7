package dev.rlmmcp.core;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.llm.LlmLimits;
import dev.rlmmcp.llm.LlmService;
import dev.rlmmcp.store.SessionDatabase;
import dev.rlmmcp.store.SessionDatabase.StoredRecord;
import dev.rlmmcp.store.SessionDatabase.StoredSession;
import dev.rlmmcp.store.StateStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Sessions resumed from the store: those it holds at start, and one this node does not run yet. */
final class Adoption {

    private static final Logger log = LoggerFactory.getLogger(Sessions.class);

    private Adoption() {}

    /**
     * The session as the snapshot store holds it; in a cluster, else as the cluster database does;
     * else, if only its variables are here, with a default record. Empty: no such session.
     */
    static Optional<StoredSession> stored(
            StateStore store, String sessionId, boolean clustered, ObjectMapper json, LlmLimits defaults)
            throws IOException {
        Optional<StoredSession> stored = store.snapshots().find(sessionId);
        if (stored.isEmpty() && clustered) {
            stored = store.database().find(sessionId, SessionDatabase.TRACE_KEPT);
        }
        if (stored.isEmpty() && store.snapshots().holdsLocally(sessionId)) {
            // A kernel writes a step's variables before the reply; the session's record is committed a
            // few milliseconds later: a server killed in between left the variables without a record.
            log.info(
                    "session {} has variables but no record (the server stopped before writing it): "
                            + "resumed with the default limits",
                    sessionId);
            stored = Optional.of(
                    new StoredSession(sessionId, SessionRecords.unrecorded(json, sessionId, defaults), List.of()));
        }
        return stored;
    }

    /** The sessions {@code from} holds, each restored (those that cannot be are logged and left out). */
    static List<Session> readBack(
            StateStore from, KernelFactory kernels, LlmService llm, ScheduledExecutorService sweeper) {
        SessionDatabase database = from.database();
        List<Session> restored = new ArrayList<>();
        for (StoredRecord stored : database.records()) {
            try {
                restored.add(Session.restore(
                        stored.id(),
                        stored.record(),
                        () -> database.trace(stored.id(), Session.TRACE_KEPT),
                        kernels,
                        llm,
                        from,
                        sweeper));
            } catch (IOException | RuntimeException e) {
                log.warn("session {} in {} could not be read back: {}", stored.id(), from.directory(), e.toString());
            }
        }
        return restored;
    }

    static RlmException failed(String sessionId, Exception e) {
        log.warn("session {} could not be taken from the snapshot store: {}", sessionId, e.toString());
        return new RlmException(
                ErrorCode.UPSTREAM_ERROR,
                "session " + sessionId + " is in the snapshot store but could not be resumed here: " + e.getMessage(),
                "session_id",
                "retry; if it persists, check the snapshot store (--snapshot-s3) and the server log");
    }
}

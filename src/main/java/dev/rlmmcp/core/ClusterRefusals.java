package dev.rlmmcp.core;

import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/** Why a cluster node does not run a session here, as the errors callers get (see {@link Ownership}). */
final class ClusterRefusals {

    static final String RETRY = "retry: the request is routed to its owner";

    private ClusterRefusals() {}

    /**
     * Whether this node may resume a session it does not run: it takes it (unowned, or its owner is
     * gone); a live other owner → SESSION_MOVED; false: the cluster has no such session.
     */
    static boolean mayResume(Ownership ownership, String sessionId, boolean handingOver, boolean clustered) {
        if (handingOver) {
            throw handingOver();
        }
        if (ownership.acquire(sessionId)) {
            return true;
        }
        Optional<String> owner = ownership.liveOwnerElsewhere(sessionId);
        if (owner.isPresent()) {
            throw moved(sessionId, owner.get());
        }
        return !clustered;
    }

    static RlmException moved(String sessionId, String ownerNode) {
        return new RlmException(
                ErrorCode.SESSION_MOVED,
                "session " + sessionId + " is owned by node " + ownerNode
                        + ", which is live; this node does not run it",
                "session_id",
                RETRY);
    }

    static RlmException handingOver() {
        return new RlmException(
                ErrorCode.SESSION_MOVED,
                "this node is shutting down and hands its sessions over; it takes no session now",
                null,
                "retry: the request is routed to another node");
    }

    /** The node lost its hold on the session (its lease lapsed, or the session was taken over) before it ran the call. */
    static RlmException notHeld(String sessionId, String why) {
        return new RlmException(
                ErrorCode.SESSION_MOVED,
                "session " + sessionId + " was not run here: " + why + "; nothing of this call ran",
                null,
                RETRY);
    }

    /** Makes a new session this node's; its id. A cluster database that refuses is the caller's error to retry. */
    static String claim(Ownership ownership, String sessionId) {
        claimed(() -> {
            ownership.claim(sessionId);
            return true;
        });
        return sessionId;
    }

    /** Makes a new session this node's under an offered id; false if the id is of no use (known, or one node). */
    static boolean claimOffered(Ownership ownership, String sessionId) {
        return claimed(() -> ownership.claimOffered(sessionId));
    }

    private static boolean claimed(BooleanSupplier claim) {
        try {
            return claim.getAsBoolean();
        } catch (RuntimeException e) {
            throw new RlmException(
                    ErrorCode.UPSTREAM_ERROR,
                    "this node cannot register a new session in the cluster database: " + e.getMessage(),
                    null,
                    "retry; if it persists, check the cluster database (--cluster-db) and this node's log");
        }
    }
}

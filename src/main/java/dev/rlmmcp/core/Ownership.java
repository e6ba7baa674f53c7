package dev.rlmmcp.core;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Which sessions this node may run. One node alone owns every session ({@link #SINGLE_NODE}, today's
 * behaviour); in a cluster ({@code dev.rlmmcp.cluster}) a session has one owner node at a time, held
 * by a lease and numbered by an epoch, and a node runs a session only while it holds it.
 */
public interface Ownership {

    /** Everything is this node's. */
    Ownership SINGLE_NODE = new Ownership() {
        @Override
        public void claim(String sessionId) {}

        @Override
        public boolean acquire(String sessionId) {
            return true;
        }

        @Override
        public boolean holds(String sessionId) {
            return true;
        }

        @Override
        public void release(String sessionId) {}
    };

    /** A session of the cluster that another node owns, or none does (released, or its owner is gone). */
    record Elsewhere(String sessionId, String ownerNode, boolean live, String record) {}

    /** This node's id in the cluster; empty on one node. */
    default Optional<String> nodeId() {
        return Optional.empty();
    }

    /** Makes a new session this node's (at {@code Sessions.register}). */
    void claim(String sessionId);

    /**
     * Makes a new session this node's under an id offered by the balancer (see {@code CallContext#offeredSessionId});
     * false if the cluster knows that id already or this is one node, where the offer is of no use.
     */
    default boolean claimOffered(String sessionId) {
        return false;
    }

    /**
     * Makes a session this node's before it is resumed here: true if held already or taken over now
     * (unowned, or its owner's lease expired); false if a live other node owns it or there is no such session.
     */
    boolean acquire(String sessionId);

    /** Whether this node holds the session now; checked before each call runs on it. */
    boolean holds(String sessionId);

    /** Gives the session up, after its last snapshot is stored (handover at shutdown). */
    void release(String sessionId);

    /** The live node that owns the session if that is another one (to name it in the refusal). */
    /**
     * Waits until no request already let in for the session can still reach it (up to {@code timeout}),
     * before it is saved and handed over; false if some still run then. One node: nothing to wait for.
     */
    default boolean quiesce(String sessionId, Duration timeout) {
        return true;
    }

    default Optional<String> liveOwnerElsewhere(String sessionId) {
        return Optional.empty();
    }

    /** The sessions of the cluster this node does not hold in memory (for rlm_sessions); none for one node. */
    default List<Elsewhere> elsewhere() {
        return List.of();
    }
}

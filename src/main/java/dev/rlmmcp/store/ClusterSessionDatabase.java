package dev.rlmmcp.store;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * The session database a cluster shares (PostgreSQL, in {@code dev.rlmmcp.store.pg}): besides the
 * records and traces, each session's owner epoch and the pointer to its current S3 snapshot. Every
 * write is fenced: it is refused (with {@link StoreException}) unless this node holds the session at
 * the epoch the database has, so a node that lost a session can no longer change it.
 */
public interface ClusterSessionDatabase extends SessionDatabase {

    /** A session's current snapshot: the epoch whose S3 directory holds it, and its generation. */
    record Pointer(long epoch, long generation) {}

    /** The epoch at which this node holds the session, empty if it does not hold it. */
    OptionalLong epoch(String sessionId);

    /** Where the session's current snapshot is, empty if it has none yet. */
    Optional<Pointer> pointer(String sessionId);

    /** Whether the database has the session at all (with or without an owner or a record). */
    boolean known(String sessionId);

    /** Points the session at a snapshot written under {@code pointer.epoch()}, fenced by that epoch. */
    void point(String sessionId, Pointer pointer);
}

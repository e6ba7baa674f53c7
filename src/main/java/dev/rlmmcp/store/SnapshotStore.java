package dev.rlmmcp.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Where variable snapshots live. A kernel reads and writes its session's snapshot in a local
 * directory (one file per variable and a manifest, written atomically by the kernel); a store that
 * keeps snapshots elsewhere (S3, so another node can resume a session) copies that directory in
 * before the kernel restores it and out after each committed snapshot.
 */
public interface SnapshotStore extends AutoCloseable {

    /** The local directory that holds every session's snapshot directory, named by session id. */
    Path root();

    /** The local directory of a session's snapshot, made current and created if missing. */
    Path checkout(String sessionId) throws IOException;

    /** Called after the kernel committed a new snapshot in {@link #checkout}'s directory. */
    void committed(String sessionId) throws IOException;

    /**
     * Whether {@link #committed} copies the session's record from the database, which must then hold
     * the snapshot's record first; a store that does not need not wait for the database's commit.
     */
    default boolean copiesRecords() {
        return false;
    }

    /** Removes a session's snapshot for good. */
    void delete(String sessionId) throws IOException;

    /**
     * A session this node does not know but the store holds (its record and trace, as written by
     * the node that snapshotted it last), so that it can be resumed here; empty if there is none.
     */
    default Optional<SessionDatabase.StoredSession> find(String sessionId) throws IOException {
        return Optional.empty();
    }

    /** Whether this node's snapshot directory holds variables of the session (its kernel wrote a manifest). */
    default boolean holdsLocally(String sessionId) {
        return Files.isRegularFile(root().resolve(sessionId).resolve("manifest.json"), LinkOption.NOFOLLOW_LINKS);
    }

    @Override
    default void close() {}
}

package dev.rlmmcp.core.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * What outlives the server, in one state directory: {@code sessions.db} (SQLite: sessions, limits,
 * state, trace) and {@code snapshots/} (variables, one directory per session).
 */
public final class StateStore implements AutoCloseable {

    private final Path directory;
    private final SessionDatabase database;
    private final SnapshotStore snapshots;
    private final Duration snapshotDebounce;

    public StateStore(Path directory, SessionDatabase database, SnapshotStore snapshots, Duration snapshotDebounce) {
        this.directory = directory;
        this.database = database;
        this.snapshots = snapshots;
        this.snapshotDebounce = snapshotDebounce;
    }

    /** The store in {@code directory} (created if missing), snapshots in its {@code snapshots/}. */
    public static StateStore open(Path directory, Duration snapshotDebounce) {
        try {
            Files.createDirectories(directory.resolve("snapshots"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the state directory " + directory, e);
        }
        return new StateStore(directory, SessionDatabase.open(directory.resolve("sessions.db")),
                new DirectorySnapshotStore(directory.resolve("snapshots")), snapshotDebounce);
    }

    public Path directory() {
        return directory;
    }

    public SessionDatabase database() {
        return database;
    }

    public SnapshotStore snapshots() {
        return snapshots;
    }

    /** How long after a step that changed variables the snapshot is written, if no other step came. */
    public Duration snapshotDebounce() {
        return snapshotDebounce;
    }

    @Override
    public void close() {
        database.close();
    }
}

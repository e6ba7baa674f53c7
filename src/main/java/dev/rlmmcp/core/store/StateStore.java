package dev.rlmmcp.core.store;

import dev.rlmmcp.core.data.S3Store;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What outlives the server, in one state directory: {@code sessions.db} (SQLite: sessions, limits,
 * state, trace) and {@code snapshots/} (variables, one directory per session).
 */
public final class StateStore implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(StateStore.class);

    private final Path directory;
    private final SessionDatabase database;
    private final SnapshotStore snapshots;
    private final Duration snapshotDebounce;
    private final ExecutorService writer = Executors.newSingleThreadExecutor(
            Thread.ofPlatform().daemon().name("state-writer").factory());

    public StateStore(Path directory, SessionDatabase database, SnapshotStore snapshots, Duration snapshotDebounce) {
        this.directory = directory;
        this.database = database;
        this.snapshots = snapshots;
        this.snapshotDebounce = snapshotDebounce;
    }

    /** The store in {@code directory} (created if missing), snapshots in its {@code snapshots/}. */
    public static StateStore open(Path directory, Duration snapshotDebounce) {
        return open(directory, snapshotDebounce, null, null);
    }

    /**
     * The store in {@code directory}; with {@code s3} and {@code mirror} (else both null), snapshots
     * and session records are also kept in S3, {@code snapshots/} being their local cache.
     */
    public static StateStore open(Path directory, Duration snapshotDebounce, S3Store s3, S3SnapshotStore.Location mirror) {
        try {
            Files.createDirectories(directory.resolve("snapshots"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the state directory " + directory, e);
        }
        SessionDatabase database = SessionDatabase.open(directory.resolve("sessions.db"));
        Path cache = directory.resolve("snapshots");
        return new StateStore(directory, database, mirror == null ? new DirectorySnapshotStore(cache)
                : new S3SnapshotStore(cache, s3, mirror, database), snapshotDebounce);
    }

    public Path directory() {
        return directory;
    }

    public SessionDatabase database() {
        return database;
    }

    /**
     * Runs a database write on the store's one writer thread, in the order asked, so that a step's
     * reply does not wait for SQLite; {@code what} names it if it fails (which is logged).
     */
    public void write(String what, Consumer<SessionDatabase> write) {
        writer.execute(() -> {
            try {
                write.accept(database);
            } catch (RuntimeException e) {
                log.warn("{} not written to the state store: {}", what, e.getMessage());
            }
        });
    }

    public SnapshotStore snapshots() {
        return snapshots;
    }

    /** How long after a step that changed variables the snapshot is written, if no other step came. */
    public Duration snapshotDebounce() {
        return snapshotDebounce;
    }

    /** Waits until every write asked for so far is in the database. */
    public void flush() {
        try {
            writer.submit(() -> { }).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.RejectedExecutionException e) {
            log.warn("state store flush: {}", e.toString());
        }
    }

    @Override
    public void close() {
        writer.shutdown();
        try {
            if (!writer.awaitTermination(30, TimeUnit.SECONDS)) {
                log.warn("state store writes still pending after 30 s; closing anyway");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        snapshots.close();
        database.close();
    }
}

package dev.rlmmcp.store;

import dev.rlmmcp.data.S3Store;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
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
    private final boolean durableReplies;
    /** Cluster mode: a step's record, trace and snapshot reach the cluster before its reply. */
    private final boolean cluster;
    /** How long the writer gathers writes before it commits them together. */
    private static final long GATHER_MS = 10;

    /** A database write; {@code done} (or null) completes once it is committed or has failed. */
    private record Write(String what, Consumer<SessionDatabase> work, CompletableFuture<Void> done)
            implements Consumer<SessionDatabase> {

        @Override
        public void accept(SessionDatabase database) {
            work.accept(database);
        }
    }

    private static final Write STOP = new Write("stop", database -> {}, null);

    private final BlockingQueue<Write> writes = new LinkedBlockingQueue<>();
    /** Set when a write someone waits for is queued: the writer stops gathering. */
    private volatile boolean urgent;

    private final Thread writer =
            Thread.ofPlatform().daemon().name("state-writer").unstarted(this::writeAll);

    StateStore(Path directory, SessionDatabase database, SnapshotStore snapshots, Duration snapshotDebounce) {
        this(directory, database, snapshots, snapshotDebounce, false);
    }

    /** With {@code durableReplies}, a step's reply is sent once the step's changes are snapshotted. */
    StateStore(
            Path directory,
            SessionDatabase database,
            SnapshotStore snapshots,
            Duration snapshotDebounce,
            boolean durableReplies) {
        this.directory = directory;
        this.durableReplies = durableReplies;
        this.cluster = database instanceof ClusterSessionDatabase;
        this.database = database;
        this.snapshots = snapshots;
        this.snapshotDebounce = snapshotDebounce;
        writer.start();
    }

    /** The store in {@code directory} (created if missing), snapshots in its {@code snapshots/}. */
    public static StateStore open(Path directory, Duration snapshotDebounce) {
        return open(directory, snapshotDebounce, false, null, null, 0);
    }

    /**
     * The store in {@code directory}; with {@code s3} and {@code mirror} (else both null), snapshots
     * and session records are also kept in S3, {@code snapshots/} being their local cache, and no
     * snapshot file larger than {@code maxFileBytes} (the most a kernel may write) is copied. With
     * {@code durableReplies}, a step's reply waits until its changes are snapshotted.
     */
    public static StateStore open(
            Path directory,
            Duration snapshotDebounce,
            boolean durableReplies,
            S3Store s3,
            S3SnapshotStore.Location mirror,
            long maxFileBytes) {
        try {
            Files.createDirectories(directory.resolve("snapshots"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the state directory " + directory, e);
        }
        SqliteNative.install(directory.resolve("lib"));
        SessionDatabase database = SqliteSessionDatabase.open(directory.resolve("sessions.db"));
        Path cache = directory.resolve("snapshots");
        return new StateStore(
                directory,
                database,
                mirror == null
                        ? new DirectorySnapshotStore(cache)
                        : new S3SnapshotStore(cache, s3, mirror, database, maxFileBytes),
                snapshotDebounce,
                durableReplies);
    }

    /**
     * The store of a cluster node: records, traces, ownership and snapshot pointers in the cluster's
     * {@code database} (which its opener closes; no SQLite), snapshots in S3 under {@code location} laid
     * out by owner epoch, {@code directory/snapshots/} their local cache. With {@code durableReplies}, a
     * step's reply also waits for the changes the kernel left to write after it.
     */
    public static StateStore openCluster(
            Path directory,
            Duration snapshotDebounce,
            boolean durableReplies,
            ClusterSessionDatabase database,
            S3Store s3,
            S3SnapshotStore.Location location,
            long maxFileBytes) {
        try {
            Files.createDirectories(directory.resolve("snapshots"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the state directory " + directory, e);
        }
        S3ClusterSnapshotStore snapshots =
                new S3ClusterSnapshotStore(directory.resolve("snapshots"), s3, location, database, maxFileBytes);
        return new StateStore(directory, database, snapshots, snapshotDebounce, durableReplies);
    }

    /**
     * Called when a step has been recorded, before its reply goes out. In cluster mode it waits until the
     * step's record and trace are committed and the snapshot the kernel wrote before replying is in S3
     * and pointed at, so that another node taking the session over sees what the reply reports; returns
     * why that failed, or null. Elsewhere it does nothing (the writes follow the reply, as ever).
     */
    public String beforeReply(String sessionId) {
        if (!cluster) {
            return null;
        }
        flush();
        try {
            snapshots.committed(sessionId);
            return null;
        } catch (IOException | RuntimeException e) {
            log.warn(
                    "session {}: the step's snapshot did not reach the cluster before its reply: {}",
                    sessionId,
                    e.getMessage());
            return e.getMessage();
        }
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

    /**
     * How long after a step that changed variables its snapshot is written at the latest (sooner if
     * another call comes first); later steps do not postpone it.
     */
    public Duration snapshotDebounce() {
        return snapshotDebounce;
    }

    /** Whether a step's reply is sent only once its changes are snapshotted. */
    public boolean durableReplies() {
        return durableReplies;
    }

    /**
     * Queues a database write for the store's one writer thread, which keeps their order and commits
     * what arrives within {@value #GATHER_MS} ms together, so that a step's reply waits for no disk;
     * {@code what} names the write if it fails (which is logged).
     */
    public void write(String what, Consumer<SessionDatabase> work) {
        writes.add(new Write(what, work, null));
    }

    /** Queues a write someone waits for (or the stop): the writer commits what it gathered now. */
    private void writeNow(Write write) {
        writes.add(write);
        urgent = true;
        LockSupport.unpark(writer);
    }

    /** Waits until every write queued so far is committed (or has failed). */
    public void flush() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        writeNow(new Write("flush", database -> {}, done));
        try {
            done.get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            log.warn("state store flush: {}", e.toString());
        }
    }

    private void writeAll() {
        boolean stopping = false;
        while (!stopping) {
            List<Write> batch = new ArrayList<>();
            try {
                batch.add(writes.take());
                if (batch.getFirst().done() == null && batch.getFirst() != STOP) {
                    gather();
                }
            } catch (InterruptedException e) {
                stopping = true;
            }
            urgent = false; // a write someone waits for that comes after this is seen by the next round
            writes.drainTo(batch);
            stopping |= batch.remove(STOP);
            commit(batch);
        }
    }

    /**
     * Lets writes gather for {@value #GATHER_MS} ms, or until one comes that someone waits for. The writer
     * sleeps meanwhile rather than waiting on the queue, which would wake it for every write of a busy session.
     */
    private void gather() {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(GATHER_MS);
        for (long left = deadline - System.nanoTime();
                left > 0 && !urgent && !Thread.currentThread().isInterrupted();
                left = deadline - System.nanoTime()) {
            LockSupport.parkNanos(this, left);
        }
    }

    private void commit(List<Write> batch) {
        try {
            database.inOneTransaction(batch);
        } catch (RuntimeException together) {
            for (Write write : batch) {
                try {
                    write.accept(database);
                } catch (RuntimeException e) {
                    log.warn("{} not written to the state store: {}", write.what(), e.getMessage());
                }
            }
        }
        batch.stream().filter(w -> w.done() != null).forEach(w -> w.done().complete(null));
    }

    @Override
    public void close() {
        writeNow(STOP);
        try {
            if (!writer.join(java.time.Duration.ofSeconds(30))) {
                log.warn("state store writes still pending after 30 s; closing anyway");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        snapshots.close();
        database.close();
    }
}

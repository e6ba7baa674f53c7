package dev.rlmmcp.store;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.data.CappedInputStream;
import dev.rlmmcp.data.Download;
import dev.rlmmcp.data.S3Store;
import dev.rlmmcp.data.TransferException;
import dev.rlmmcp.store.ClusterSessionDatabase.Pointer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Snapshots in S3 for cluster mode, laid out by owner epoch: the snapshot a node writes while it holds
 * a session at epoch e goes under {@code prefix/<session>/e<e>/} (the kernel's files, and
 * {@code manifest-<generation>.json}, named by generation so that no manifest a pointer names is ever
 * overwritten). After the manifest is up, the session's pointer in the cluster database is set to
 * (e, generation) by a fenced write; a checkout reads the pointer and downloads that manifest and its
 * files. A new owner's first snapshot uploads every file under its own epoch; once its pointer is set
 * it deletes (in the background) the older epochs' keys and the files its own manifest no longer names. A node that lost
 * the session (a zombie) can only write under its own, older epoch, which no pointer names again and
 * whose keys it never deletes unless its fenced pointer write succeeded. Records and traces live in
 * the database, not here.
 */
final class S3ClusterSnapshotStore implements SnapshotStore {

    private static final Logger log = LoggerFactory.getLogger(S3ClusterSnapshotStore.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern EPOCH_KEY = Pattern.compile("e(\\d+)/(.+)");
    /** Transfers of one snapshot at once: enough to hide S3's latency, few enough to bound the buffers. */
    private static final int PARALLEL = 8;

    /**
     * What this process last put in (or took into) a session's local directory at an epoch, and which
     * files of it are up under that epoch (null: none yet, the directory was checked out from the pointer).
     */
    private record Synced(long epoch, long generation, Set<String> uploaded) {}

    private final DirectorySnapshotStore local;
    private final Path staging;
    private final long maxFileBytes;
    private final S3Store s3;
    private final S3SnapshotStore.Location location;
    private final ClusterSessionDatabase database;
    private final Map<String, Synced> synced = new ConcurrentHashMap<>();
    private final Map<String, Object> locks = new ConcurrentHashMap<>();
    private volatile boolean bucketReady;
    /** Removes what snapshots made obsolete, one snapshot's keys after another's, off the reply's path. */
    private final ExecutorService cleanup = Executors.newSingleThreadExecutor(
            Thread.ofVirtual().name("snapshot-cleanup").factory());

    S3ClusterSnapshotStore(
            Path root,
            S3Store s3,
            S3SnapshotStore.Location location,
            ClusterSessionDatabase database,
            long maxFileBytes) {
        this.local = new DirectorySnapshotStore(root);
        this.staging = root.resolve(".staging");
        this.maxFileBytes = maxFileBytes;
        this.s3 = s3;
        this.location = location;
        this.database = database;
    }

    @Override
    public Path root() {
        return local.root();
    }

    /**
     * The session's directory as its pointer says: the local one if this process wrote it at the epoch
     * it holds now, else emptied and filled from the pointer's epoch in S3 (a local copy from an older
     * epoch may hold files of the same names with other content).
     */
    @Override
    public Path checkout(String sessionId) throws IOException {
        synchronized (lock(sessionId)) {
            long epoch = held(sessionId, "its snapshot cannot be checked out");
            Path dir = local.checkout(sessionId);
            Synced mine = synced.get(sessionId);
            if (mine != null && mine.epoch() == epoch) {
                return dir;
            }
            local.delete(sessionId);
            dir = local.checkout(sessionId);
            Optional<Pointer> pointer = pointer(sessionId);
            if (pointer.isEmpty()) {
                synced.put(sessionId, new Synced(epoch, 0, null));
                return dir;
            }
            download(sessionId, new UntrustedDir(dir, staging), pointer.get());
            synced.put(sessionId, new Synced(epoch, pointer.get().generation(), null));
            return dir;
        }
    }

    private void download(String sessionId, UntrustedDir files, Pointer from) throws IOException {
        long started = System.nanoTime();
        String base = base(sessionId, from.epoch());
        byte[] manifest = get(base + manifestName(from.generation()));
        if (manifest == null) {
            throw new IOException("the snapshot of session " + sessionId + " that the cluster database points at ("
                    + location + base.substring(location.prefix().length()) + manifestName(from.generation())
                    + ") is missing");
        }
        Map<String, Long> wanted = S3SnapshotStore.files(manifest, maxFileBytes);
        long bytes = 0;
        for (Map.Entry<String, Long> file : wanted.entrySet()) {
            bytes += download(files, base + file.getKey(), file.getKey(), file.getValue());
        }
        files.put(S3SnapshotStore.MANIFEST, new ByteArrayInputStream(manifest));
        log.info(
                "session {}: snapshot generation {} of epoch {} taken from {} ({} files, {} bytes, {} ms)",
                sessionId,
                from.generation(),
                from.epoch(),
                location,
                wanted.size(),
                bytes,
                (System.nanoTime() - started) / 1_000_000);
    }

    private long download(UntrustedDir files, String key, String name, long size) throws IOException {
        try (Download download = s3.open(location.bucket(), key);
                InputStream in = new CappedInputStream(
                        download.body(),
                        size,
                        cap -> new TransferException(
                                ErrorCode.TOO_LARGE, "larger than its manifest says", null, null))) {
            long n = files.put(name, in);
            if (n != size) {
                throw new IOException(key + " has " + n + " bytes, the manifest says " + size);
            }
            return n;
        } catch (RlmException e) {
            throw new IOException("cannot download " + key + ": " + e.getMessage(), e);
        }
    }

    /** The records are in the cluster database: a snapshot need not wait for them. */
    @Override
    public boolean copiesRecords() {
        return false;
    }

    /**
     * Uploads the local snapshot under this node's epoch (only what is not up yet), then points the
     * session at it (fenced), then removes what no pointer can name any more. Does nothing if the
     * pointer already names this generation.
     */
    @Override
    public void committed(String sessionId) throws IOException {
        synchronized (lock(sessionId)) {
            long epoch = held(sessionId, "its snapshot is not uploaded");
            UntrustedDir dir = new UntrustedDir(local.checkout(sessionId), staging);
            byte[] manifest;
            try {
                manifest = dir.read(S3SnapshotStore.MANIFEST, S3SnapshotStore.MAX_MANIFEST_BYTES);
            } catch (java.nio.file.NoSuchFileException e) {
                return;
            }
            long generation = JSON.readTree(manifest).path("generation").asLong(0);
            Synced before = synced.get(sessionId);
            boolean sameEpoch = before != null && before.epoch() == epoch;
            if (sameEpoch && before.generation() == generation) {
                return; // up already, or the pointer's own (just checked out): nothing changed
            }
            try {
                upload(sessionId, epoch, dir, manifest, generation, sameEpoch ? before : null);
            } catch (RlmException | StoreException e) {
                throw new IOException(
                        "cannot store the snapshot of session " + sessionId + " in " + location + ": " + e.getMessage(),
                        e);
            }
        }
    }

    /**
     * Uploads under {@code epoch} what {@code before} (this epoch's last upload, or null) does not hold,
     * points at it, and removes what is obsolete. The files and the manifest go up together (nothing
     * reads a manifest before a pointer names it), then the pointer is set, then the obsolete keys go.
     * The first upload of an epoch (and every 32nd generation, for what a zombie left) lists the
     * session's keys; the others know what is there.
     */
    private void upload(String sessionId, long epoch, UntrustedDir dir, byte[] manifest, long generation, Synced before)
            throws IOException {
        ensureBucket();
        Map<String, Long> files = S3SnapshotStore.files(manifest, maxFileBytes);
        String base = base(sessionId, epoch);
        boolean known = before != null && before.uploaded() != null && generation % 32 != 0;
        Map<String, Long> there = known ? Map.of() : listed(sessionId);
        Set<String> up = known ? before.uploaded() : Set.of();
        List<Transfer> puts = new ArrayList<>();
        for (Map.Entry<String, Long> file : files.entrySet()) {
            String key = base + file.getKey();
            if (!up.contains(file.getKey()) && !file.getValue().equals(there.get(key))) {
                // a file name is written once per epoch: the kernel names files by generation
                puts.add(() -> {
                    held(sessionId, "its snapshot is not uploaded");
                    try (UntrustedDir.Staged staged = dir.open(file.getKey(), file.getValue())) {
                        s3.uploadFile(location.bucket(), key, staged.path());
                    }
                });
            }
        }
        String manifestKey = base + manifestName(generation);
        puts.add(() -> s3.upload(location.bucket(), manifestKey, new ByteArrayInputStream(manifest), manifest.length));
        inParallel(puts);
        database.point(sessionId, new Pointer(epoch, generation));
        synced.put(sessionId, new Synced(epoch, generation, Set.copyOf(files.keySet())));
        // the pointer is ours (fenced): nothing else can name what goes now
        List<String> obsolete = new ArrayList<>();
        if (known) {
            obsolete.add(base + manifestName(before.generation()));
            before.uploaded().stream().filter(n -> !files.containsKey(n)).forEach(n -> obsolete.add(base + n));
        } else {
            there.keySet().stream()
                    .filter(key -> !key.equals(manifestKey))
                    .filter(key -> obsolete(key.substring(prefix(sessionId).length()), epoch, files))
                    .forEach(obsolete::add);
        }
        List<Transfer> deletes = obsolete.stream()
                .map(key -> (Transfer) () -> s3.delete(location.bucket(), key))
                .toList();
        // after the reply: the snapshot is up and pointed at, and no later snapshot names these keys again
        cleanup.execute(() -> {
            try {
                inParallel(deletes);
            } catch (IOException | RuntimeException e) {
                log.info("session {}: obsolete snapshot keys not all removed: {}", sessionId, e.getMessage());
            }
        });
    }

    /** One request to S3. */
    @FunctionalInterface
    private interface Transfer {
        void run() throws IOException;
    }

    /** Runs the transfers, at most {@value #PARALLEL} at a time; the first failure is thrown once all ended. */
    private static void inParallel(List<Transfer> transfers) throws IOException {
        if (transfers.size() <= 1) {
            for (Transfer t : transfers) {
                t.run();
            }
            return;
        }
        Semaphore slots = new Semaphore(PARALLEL);
        List<Future<Void>> done = new ArrayList<>();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Transfer t : transfers) {
                done.add(threads.submit(() -> {
                    slots.acquire();
                    try {
                        t.run();
                        return null;
                    } finally {
                        slots.release();
                    }
                }));
            }
            for (Future<Void> f : done) {
                f.get();
            }
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    /** A key (relative to the session's prefix) of an older epoch, or of ours that our manifest does not name. */
    private static boolean obsolete(String relative, long epoch, Map<String, Long> named) {
        Matcher m = EPOCH_KEY.matcher(relative);
        if (!m.matches()) {
            return false;
        }
        long of = Long.parseLong(m.group(1));
        return of < epoch || (of == epoch && !named.containsKey(m.group(2)));
    }

    /**
     * Removes the session's snapshot: the local copy, and the S3 keys once the database no longer has the
     * session (so a node whose deletion was refused, having lost the session, leaves S3 alone).
     */
    @Override
    public void delete(String sessionId) throws IOException {
        synchronized (lock(sessionId)) {
            synced.remove(sessionId);
            local.delete(sessionId);
            if (database.known(sessionId)) {
                throw new IOException("session " + sessionId + " is still in the cluster database; its snapshot "
                        + "in " + location + " is kept");
            }
            try {
                for (String key : listed(sessionId).keySet()) {
                    s3.delete(location.bucket(), key);
                }
            } catch (RlmException e) {
                throw new IOException("cannot remove " + location + sessionId + "/: " + e.getMessage(), e);
            }
        }
        locks.remove(sessionId);
    }

    /** A session another node snapshotted: its record and trace, from the cluster database. */
    @Override
    public Optional<SessionDatabase.StoredSession> find(String sessionId) {
        return database.find(sessionId, SessionDatabase.TRACE_KEPT);
    }

    @Override
    public void close() {
        cleanup.shutdown();
        try {
            if (!cleanup.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS)) {
                log.info("obsolete snapshot keys still being removed after 10 s; left for the next owner's listing");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        s3.close();
    }

    private long held(String sessionId, String consequence) throws IOException {
        OptionalLong epoch = database.epoch(sessionId);
        if (epoch.isEmpty()) {
            throw new NotHeldException("this node no longer owns session " + sessionId + ": " + consequence);
        }
        return epoch.getAsLong();
    }

    private Optional<Pointer> pointer(String sessionId) throws IOException {
        try {
            return database.pointer(sessionId);
        } catch (StoreException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    private Map<String, Long> listed(String sessionId) {
        Map<String, Long> there = new HashMap<>();
        try {
            for (S3Store.Entry entry : s3.listAll(location.bucket(), prefix(sessionId))) {
                there.put(entry.key(), entry.size());
            }
        } catch (RlmException e) {
            if (e.code() != ErrorCode.NOT_FOUND) {
                throw e;
            }
        }
        return there;
    }

    private byte[] get(String key) throws IOException {
        try (Download download = s3.open(location.bucket(), key);
                InputStream in = download.body()) {
            return in.readNBytes((int) S3SnapshotStore.MAX_MANIFEST_BYTES);
        } catch (RlmException e) {
            if (e.code() == ErrorCode.NOT_FOUND) {
                return null;
            }
            throw new IOException("cannot read " + key + ": " + e.getMessage(), e);
        }
    }

    private void ensureBucket() {
        if (!bucketReady) {
            s3.ensureBucket(location.bucket());
            bucketReady = true;
        }
    }

    private Object lock(String sessionId) {
        return locks.computeIfAbsent(sessionId, id -> new Object());
    }

    private String prefix(String sessionId) {
        if (!sessionId.matches("[A-Za-z0-9_-]+")) {
            throw new IllegalArgumentException("not a session id: " + sessionId);
        }
        return location.prefix() + sessionId + "/";
    }

    private String base(String sessionId, long epoch) {
        return prefix(sessionId) + "e" + epoch + "/";
    }

    static String manifestName(long generation) {
        return "manifest-" + generation + ".json";
    }
}

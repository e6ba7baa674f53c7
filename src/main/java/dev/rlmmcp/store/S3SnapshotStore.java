package dev.rlmmcp.store;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.data.CappedInputStream;
import dev.rlmmcp.data.Download;
import dev.rlmmcp.data.S3Store;
import dev.rlmmcp.data.TransferException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Snapshots mirrored to S3 under {@code s3://bucket/prefix/<session id>/}, the local directory kept
 * as a cache, so that another node (with its own state directory) can resume a session. Next to the
 * kernel's files and {@code manifest.json} lie {@code session.json} (the session's record) and
 * {@code trace.jsonl} (its trace, one entry per line), written at each commit.
 *
 * <p>A commit uploads the files the remote manifest does not name yet, then the record and trace,
 * then the manifest, last: a reader never sees a manifest naming files that are not there. Files no
 * manifest names are removed after. A checkout downloads the remote snapshot when it is newer than
 * the local one (a higher generation), the manifest again last. Files move as streams. One node at a
 * time works on a session; two nodes writing the same session at once is not supported.
 */
public final class S3SnapshotStore implements SnapshotStore {

    static final String MANIFEST = "manifest.json";
    static final String RECORD = "session.json";
    static final String TRACE = "trace.jsonl";
    private static final Logger log = LoggerFactory.getLogger(S3SnapshotStore.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Where snapshots go: a bucket and a key prefix ("" or ending in '/'). */
    public record Location(String bucket, String prefix) {

        /** {@code s3://bucket} or {@code s3://bucket/some/prefix}. */
        public static Location parse(String uri) {
            String v = uri == null ? "" : uri.strip();
            if (!v.startsWith("s3://")) {
                throw new IllegalArgumentException("'" + uri + "' is not an s3://bucket[/prefix] address");
            }
            String rest = v.substring("s3://".length());
            int slash = rest.indexOf('/');
            String bucket = slash < 0 ? rest : rest.substring(0, slash);
            String prefix = slash < 0 ? "" : rest.substring(slash + 1).replaceAll("^/+|/+$", "");
            if (!bucket.matches("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")) {
                throw new IllegalArgumentException("'" + bucket + "' in '" + uri + "' is not a valid bucket name");
            }
            if (prefix.contains("//") || prefix.chars().anyMatch(c -> c < 0x20)) {
                throw new IllegalArgumentException(
                        "the prefix in '" + uri + "' has an empty segment or a control character");
            }
            return new Location(bucket, prefix.isEmpty() ? "" : prefix + "/");
        }

        @Override
        public String toString() {
            return "s3://" + bucket + "/" + prefix;
        }
    }

    /** A manifest lists variables by name and file: far below this even for thousands of variables. */
    static final long MAX_MANIFEST_BYTES = 64L << 20;

    private final DirectorySnapshotStore local;
    private final Path staging;
    private final long maxFileBytes;
    private final S3Store s3;
    private final Location location;
    private final SessionDatabase database;
    private volatile boolean bucketReady;

    /**
     * Snapshots cached in {@code root/<session id>/}, mirrored to {@code location}; records read from
     * {@code database}; no snapshot file may be larger than {@code maxFileBytes} (what a kernel may write).
     */
    S3SnapshotStore(Path root, S3Store s3, Location location, SessionDatabase database, long maxFileBytes) {
        this.local = new DirectorySnapshotStore(root);
        this.staging = root.resolve(".staging");
        this.maxFileBytes = maxFileBytes;
        this.s3 = s3;
        this.location = location;
        this.database = database;
    }

    public Location location() {
        return location;
    }

    @Override
    public Path root() {
        return local.root();
    }

    @Override
    public Path checkout(String sessionId) throws IOException {
        Path dir = local.checkout(sessionId);
        UntrustedDir files = untrusted(dir);
        byte[] remote;
        try {
            remote = get(sessionId, MANIFEST);
        } catch (IOException e) {
            if (Files.exists(dir.resolve(MANIFEST), LinkOption.NOFOLLOW_LINKS)) {
                log.warn(
                        "session {}: cannot read its snapshot in {} ({}); using the local copy",
                        sessionId,
                        location,
                        e.getMessage());
                return dir;
            }
            throw e;
        }
        if (remote == null || generation(remote) <= localGeneration(files)) {
            return dir;
        }
        Map<String, Long> wanted = files(remote);
        long bytes = 0;
        long started = System.nanoTime();
        for (Map.Entry<String, Long> file : wanted.entrySet()) {
            if (!files.holds(file.getKey(), file.getValue())) {
                bytes += download(sessionId, files, file.getKey(), file.getValue());
            }
        }
        files.put(MANIFEST, new ByteArrayInputStream(remote));
        log.info(
                "session {}: snapshot generation {} taken from {} ({} files, {} bytes, {} ms)",
                sessionId,
                generation(remote),
                location,
                wanted.size(),
                bytes,
                (System.nanoTime() - started) / 1_000_000);
        return dir;
    }

    /**
     * Downloads one snapshot file of the session into {@code files}, refusing more or fewer bytes than its
     * manifest entry says; returns the bytes written.
     */
    private long download(String sessionId, UntrustedDir files, String name, long size) throws IOException {
        try (Download download = s3.open(location.bucket(), key(sessionId, name));
                InputStream in = new CappedInputStream(
                        download.body(),
                        size,
                        cap -> new TransferException(
                                ErrorCode.TOO_LARGE, "larger than its manifest says", null, null))) {
            long n = files.put(name, in);
            if (n != size) {
                throw new IOException(key(sessionId, name) + " has " + n + " bytes, the manifest says " + size);
            }
            return n;
        } catch (RlmException e) {
            throw new IOException("cannot download " + key(sessionId, name) + ": " + e.getMessage(), e);
        }
    }

    @Override
    public boolean copiesRecords() {
        return true;
    }

    @Override
    public void committed(String sessionId) throws IOException {
        UntrustedDir dir = untrusted(local.checkout(sessionId));
        byte[] manifest;
        try {
            manifest = dir.read(MANIFEST, MAX_MANIFEST_BYTES);
        } catch (java.nio.file.NoSuchFileException e) {
            return;
        }
        Map<String, Long> files = files(manifest);
        try {
            ensureBucket();
            byte[] remote = get(sessionId, MANIFEST);
            Set<String> uploaded = remote == null ? Set.of() : files(remote).keySet();
            Map<String, Long> there = new HashMap<>();
            String prefix = key(sessionId, "");
            for (S3Store.Entry entry : s3.listAll(location.bucket(), prefix)) {
                there.put(entry.key().substring(prefix.length()), entry.size());
            }
            for (Map.Entry<String, Long> file : files.entrySet()) {
                if (uploaded.contains(file.getKey()) && file.getValue().equals(there.get(file.getKey()))) {
                    continue;
                }
                try (UntrustedDir.Staged staged = dir.open(file.getKey(), file.getValue())) {
                    s3.uploadFile(location.bucket(), key(sessionId, file.getKey()), staged.path());
                }
            }
            Optional<SessionDatabase.StoredSession> stored =
                    database == null ? Optional.empty() : database.find(sessionId, SessionDatabase.TRACE_KEPT);
            if (stored.isPresent()) {
                put(sessionId, RECORD, stored.get().record().getBytes(StandardCharsets.UTF_8));
                put(sessionId, TRACE, String.join("\n", stored.get().trace()).getBytes(StandardCharsets.UTF_8));
            }
            put(sessionId, MANIFEST, manifest);
            Set<String> keep = new java.util.HashSet<>(files.keySet());
            keep.addAll(List.of(MANIFEST, RECORD, TRACE));
            for (String name : there.keySet()) {
                if (!keep.contains(name)) {
                    s3.delete(location.bucket(), key(sessionId, name));
                }
            }
        } catch (RlmException | StoreException e) {
            throw new IOException("cannot copy the snapshot to " + location + sessionId + "/: " + e.getMessage(), e);
        }
    }

    @Override
    public void delete(String sessionId) throws IOException {
        local.delete(sessionId);
        try {
            for (S3Store.Entry entry : s3.listAll(location.bucket(), key(sessionId, ""))) {
                s3.delete(location.bucket(), entry.key());
            }
        } catch (RlmException e) {
            if (e.code() != ErrorCode.NOT_FOUND) {
                throw new IOException("cannot remove " + location + sessionId + "/: " + e.getMessage(), e);
            }
        }
    }

    @Override
    public Optional<SessionDatabase.StoredSession> find(String sessionId) throws IOException {
        byte[] record = get(sessionId, RECORD);
        if (record == null) {
            return Optional.empty();
        }
        byte[] trace = get(sessionId, TRACE);
        List<String> entries = new ArrayList<>();
        if (trace != null) {
            for (String line : new String(trace, StandardCharsets.UTF_8).split("\n")) {
                if (!line.isBlank()) {
                    entries.add(line);
                }
            }
        }
        return Optional.of(
                new SessionDatabase.StoredSession(sessionId, new String(record, StandardCharsets.UTF_8), entries));
    }

    @Override
    public void close() {
        s3.close();
    }

    private void ensureBucket() {
        if (!bucketReady) {
            s3.ensureBucket(location.bucket());
            bucketReady = true;
        }
    }

    /** A small object's bytes (manifest, record, trace), or null if there is none. */
    private byte[] get(String sessionId, String name) throws IOException {
        try (Download download = s3.open(location.bucket(), key(sessionId, name));
                InputStream in = download.body()) {
            return in.readAllBytes();
        } catch (RlmException e) {
            if (e.code() == ErrorCode.NOT_FOUND) {
                return null;
            }
            throw new IOException(
                    "cannot read " + location
                            + key(sessionId, name).substring(location.prefix().length()) + ": " + e.getMessage(),
                    e);
        }
    }

    private void put(String sessionId, String name, byte[] content) throws IOException {
        s3.upload(location.bucket(), key(sessionId, name), new ByteArrayInputStream(content), content.length);
    }

    private String key(String sessionId, String name) {
        if (!sessionId.matches("[A-Za-z0-9_-]+")) {
            throw new IllegalArgumentException("not a session id: " + sessionId);
        }
        return location.prefix() + sessionId + "/" + name;
    }

    /**
     * Each file a manifest names, with its size. A manifest is the kernel's (or another node's kernel's)
     * writing: a name that is not a plain file name, a size that is negative or past the largest file
     * a kernel may write, and a file named twice are refused.
     */
    private Map<String, Long> files(byte[] manifest) throws IOException {
        return files(manifest, maxFileBytes);
    }

    /** {@link #files(byte[])} with files of at most {@code maxFileBytes}: the one reading of a manifest. */
    static Map<String, Long> files(byte[] manifest, long maxFileBytes) throws IOException {
        Map<String, Long> files = new LinkedHashMap<>();
        for (JsonNode entry : JSON.readTree(manifest).path("variables")) {
            if (entry.has("file")) {
                if (!entry.path("file").isTextual()) {
                    throw new IOException("the manifest names a file that is not a string");
                }
                long size = 0;
                for (JsonNode n : entry.path("lengths")) {
                    if (!n.canConvertToLong() || n.asLong() < 0) {
                        throw new IOException("the manifest gives a length that is not a size: " + n);
                    }
                    size += n.asLong();
                }
                String name = UntrustedDir.fileName(entry.path("file").asText());
                if (List.of(MANIFEST, RECORD, TRACE).contains(name) || size < 0 || size > maxFileBytes) {
                    throw new IOException(
                            "the manifest names " + name + " with " + size + " bytes, which no kernel writes");
                }
                if (files.put(name, size) != null) {
                    throw new IOException("the manifest names " + name + " twice");
                }
            }
        }
        return files;
    }

    private static long generation(byte[] manifest) throws IOException {
        return JSON.readTree(manifest).path("generation").asLong(0);
    }

    private static long localGeneration(UntrustedDir dir) {
        try {
            return generation(dir.read(MANIFEST, MAX_MANIFEST_BYTES));
        } catch (IOException e) {
            return -1;
        }
    }

    private UntrustedDir untrusted(Path dir) {
        return new UntrustedDir(dir, staging);
    }
}

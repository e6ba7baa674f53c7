package dev.rlmmcp.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rlmmcp.data.Download;
import dev.rlmmcp.data.S3Settings;
import dev.rlmmcp.data.S3Store;
import dev.rlmmcp.testsupport.S3ProxyServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The S3 snapshot store against a real S3 server (S3Proxy): two "nodes", each with its own state
 * directory and database, sharing one bucket. Manifests are written here in the kernel's format.
 */
class S3SnapshotStoreIT {

    @TempDir
    static Path tmp;

    static S3ProxyServer server;
    static S3Store s3;
    static int run;

    @TempDir
    Path nodeA;

    @TempDir
    Path nodeB;

    SessionDatabase dbA;
    SessionDatabase dbB;
    S3SnapshotStore a;
    S3SnapshotStore b;
    S3SnapshotStore.Location location;

    @BeforeAll
    static void start() throws IOException {
        server = S3ProxyServer.start(tmp.resolve("s3"));
        Duration t = Duration.ofSeconds(30);
        s3 = new S3Store(S3Settings.fromEnv(server.env(), "unused"), t, t);
    }

    @AfterAll
    static void stop() {
        s3.close();
        server.close();
    }

    @BeforeEach
    void nodes() {
        location = S3SnapshotStore.Location.parse("s3://snapshots/run-" + (++run) + "/nodes");
        dbA = SqliteSessionDatabase.open(nodeA.resolve("sessions.db"));
        dbB = SqliteSessionDatabase.open(nodeB.resolve("sessions.db"));
        a = new S3SnapshotStore(nodeA.resolve("snapshots"), s3, location, dbA, 1L << 30);
        b = new S3SnapshotStore(nodeB.resolve("snapshots"), s3, location, dbB, 1L << 30);
    }

    @AfterEach
    void close() {
        dbA.close();
        dbB.close();
    }

    /** Writes variable files and the manifest naming them, as the kernel does. */
    private static void snapshot(Path dir, int generation, Map<String, byte[]> variables) throws IOException {
        StringBuilder entries = new StringBuilder();
        for (Map.Entry<String, byte[]> v : variables.entrySet()) {
            String file = v.getKey() + "." + generation;
            if (!Files.exists(dir.resolve(file))) {
                Files.write(dir.resolve(file), v.getValue());
            }
            entries.append(entries.isEmpty() ? "" : ", ")
                    .append("\"")
                    .append(v.getKey())
                    .append("\": {\"kind\": \"bytes\", ")
                    .append("\"file\": \"")
                    .append(file)
                    .append("\", \"lengths\": [")
                    .append(v.getValue().length)
                    .append("]}");
        }
        Files.writeString(
                dir.resolve("manifest.json"),
                "{\"version\": 1, \"generation\": " + generation + ", \"variables\": {" + entries
                        + "}, \"modules\": {}, \"not_persisted\": {}}");
    }

    private Map<String, Long> remote(String id) {
        String prefix = location.prefix() + id + "/";
        return s3.listAll(location.bucket(), prefix).stream()
                .collect(Collectors.toMap(
                        e -> e.key().substring(prefix.length()), S3Store.Entry::size, (x, y) -> x, TreeMap::new));
    }

    private byte[] remoteBytes(String id, String name) throws IOException {
        try (Download d = s3.open(location.bucket(), location.prefix() + id + "/" + name);
                InputStream in = d.body()) {
            return in.readAllBytes();
        }
    }

    private static Map<String, String> files(Path dir) throws IOException {
        try (Stream<Path> list = Files.list(dir)) {
            Map<String, String> files = new TreeMap<>();
            for (Path p : list.toList()) {
                files.put(p.getFileName().toString(), sha256(p));
            }
            return files;
        }
    }

    private static String sha256(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            byte[] buffer = new byte[1 << 16];
            for (int n; (n = in.read(buffer)) > 0; ) {
                digest.update(buffer, 0, n);
            }
            return HexFormat.of().formatHex(digest.digest());
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aCommitIsResumedOnAnotherNodeWithRecordAndTrace() throws IOException {
        String id = "s-0001";
        Path dir = a.checkout(id);
        snapshot(dir, 1, Map.of("x", "hello".getBytes(StandardCharsets.UTF_8), "y", new byte[70_000]));
        dbA.save(id, "{\"id\":\"s-0001\",\"name\":\"n\"}");
        dbA.append(id, "{\"id\":\"s-0001\",\"name\":\"n\",\"steps\":2}", 0, "{\"index\":0,\"input\":\"a\"}", 100);
        dbA.append(id, "{\"id\":\"s-0001\",\"name\":\"n\",\"steps\":2}", 1, "{\"index\":1,\"input\":\"b\\nc\"}", 100);
        a.committed(id);

        assertThat(remote(id))
                .containsOnlyKeys("manifest.json", "session.json", "trace.jsonl", "x.1", "y.1")
                .containsEntry("y.1", 70_000L);
        assertThat(b.find("s-unknown")).isEmpty();
        SessionDatabase.StoredSession found = b.find(id).orElseThrow();
        assertThat(found.record()).contains("\"steps\":2");
        assertThat(found.trace()).containsExactly("{\"index\":0,\"input\":\"a\"}", "{\"index\":1,\"input\":\"b\\nc\"}");
        dbB.adopt(found);
        assertThat(dbB.find(id, 100).orElseThrow()).isEqualTo(found);

        Path there = b.checkout(id);
        assertThat(files(there)).isEqualTo(files(dir));
    }

    @Test
    void theManifestIsWrittenLastSoAFailedCommitLeavesTheLastWholeSnapshot() throws IOException {
        String id = "s-0002";
        Path dir = a.checkout(id);
        snapshot(dir, 1, Map.of("x", "one".getBytes(StandardCharsets.UTF_8)));
        a.committed(id);
        byte[] first = remoteBytes(id, "manifest.json");

        snapshot(dir, 2, Map.of("x", "two".getBytes(StandardCharsets.UTF_8), "z", new byte[10]));
        Files.delete(dir.resolve("z.2"));
        assertThatThrownBy(() -> a.committed(id)).isInstanceOf(IOException.class);
        assertThat(remoteBytes(id, "manifest.json")).isEqualTo(first);

        Path there = b.checkout(id);
        assertThat(Files.readString(there.resolve("manifest.json"))).contains("\"generation\": 1");
        assertThat(Files.readString(there.resolve("x.1"))).isEqualTo("one");
    }

    @Test
    void unchangedFilesAreNotUploadedAgainAndFilesNoManifestNamesAreRemoved() throws Exception {
        String id = "s-0003";
        Path dir = a.checkout(id);
        snapshot(dir, 1, Map.of("keep", new byte[1000], "gone", new byte[5]));
        a.committed(id);
        var before = s3.listAll(location.bucket(), location.prefix() + id + "/keep.1")
                .getFirst()
                .lastModified();
        Thread.sleep(1100);
        Files.delete(dir.resolve("gone.1"));
        Files.write(dir.resolve("new.2"), new byte[7]);
        // an unchanged variable keeps its file, as the kernel does when its digest is the same
        Files.writeString(
                dir.resolve("manifest.json"),
                "{\"generation\": 2, \"variables\": {"
                        + "\"keep\": {\"file\": \"keep.1\", \"lengths\": [1000]}, \"new\": {\"file\": \"new.2\", \"lengths\": [7]}}}");
        a.committed(id);

        assertThat(remote(id)).containsOnlyKeys("manifest.json", "keep.1", "new.2");
        assertThat(s3.listAll(location.bucket(), location.prefix() + id + "/keep.1")
                        .getFirst()
                        .lastModified())
                .isEqualTo(before);
    }

    @Test
    void aStaleLocalCopyIsReplacedAndANewerOneIsKept() throws IOException {
        String id = "s-0004";
        Path dirA = a.checkout(id);
        snapshot(dirA, 1, Map.of("v", "old".getBytes(StandardCharsets.UTF_8)));
        a.committed(id);
        Path dirB = b.checkout(id);
        assertThat(Files.readString(dirB.resolve("v.1"))).isEqualTo("old");

        Files.delete(dirA.resolve("v.1"));
        snapshot(dirA, 2, Map.of("v", "newer".getBytes(StandardCharsets.UTF_8)));
        a.committed(id);
        b.checkout(id);
        assertThat(Files.readString(dirB.resolve("manifest.json"))).contains("\"generation\": 2");
        assertThat(Files.readString(dirB.resolve("v.2"))).isEqualTo("newer");

        snapshot(dirB, 3, Map.of("v", "local".getBytes(StandardCharsets.UTF_8)));
        b.checkout(id);
        assertThat(Files.readString(dirB.resolve("manifest.json"))).contains("\"generation\": 3");
    }

    @Test
    void largeFilesStreamBothWays() throws IOException {
        String id = "s-0005";
        Path dir = a.checkout(id);
        long size = 40L * 1024 * 1024 + 12_345;
        Path big = dir.resolve("big.1");
        try (OutputStream out = Files.newOutputStream(big)) {
            byte[] block = new byte[1 << 20];
            for (long written = 0; written < size; written += block.length) {
                for (int i = 0; i < block.length; i += 4096) {
                    block[i] = (byte) (written / block.length + i);
                }
                out.write(block, 0, (int) Math.min(block.length, size - written));
            }
        }
        Files.writeString(
                dir.resolve("manifest.json"),
                "{\"generation\": 1, \"variables\": {\"big\": {\"file\": " + "\"big.1\", \"lengths\": [" + size
                        + "]}}}");
        a.committed(id);
        assertThat(remote(id)).containsEntry("big.1", size);
        Path there = b.checkout(id);
        assertThat(sha256(there.resolve("big.1"))).isEqualTo(sha256(big));
    }

    @Test
    void deleteRemovesTheSessionEverywhere() throws IOException {
        String id = "s-0006";
        Path dir = a.checkout(id);
        snapshot(dir, 1, Map.of("x", new byte[3]));
        dbA.save(id, "{}");
        a.committed(id);
        assertThat(remote(id)).isNotEmpty();
        a.delete(id);
        assertThat(remote(id)).isEmpty();
        assertThat(Files.exists(dir)).isFalse();
        assertThat(b.find(id)).isEmpty();
        b.delete("s-never-there");
    }

    @Test
    void locationsAreParsedStrictly() {
        assertThat(S3SnapshotStore.Location.parse("s3://my-bucket"))
                .isEqualTo(new S3SnapshotStore.Location("my-bucket", ""));
        assertThat(S3SnapshotStore.Location.parse("s3://my-bucket/a/b/"))
                .isEqualTo(new S3SnapshotStore.Location("my-bucket", "a/b/"));
        for (String bad : List.of("my-bucket", "http://x/y", "s3://UPPER/x", "s3://b/a//c", "s3://")) {
            assertThatThrownBy(() -> S3SnapshotStore.Location.parse(bad))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }
    // The attacks of a hostile kernel on the server through its snapshot directory: nothing it plants
    // is followed, resolved outside the directory, or read unless it is a regular file of its size.

    private static void manifest(Path dir, String file, long length) throws IOException {
        Files.writeString(
                dir.resolve("manifest.json"),
                "{\"generation\": 1, \"variables\": {\"v\": " + "{\"kind\": \"bytes\", \"file\": \"" + file
                        + "\", \"lengths\": [" + length + "]}}}");
    }

    @Test
    void aLinkToAHostFileIsNeverUploaded() throws IOException {
        Path secret = Files.writeString(tmp.resolve("host-secret"), "root-only secret");
        String id = "s-attack-link";
        Path dir = a.checkout(id);
        Files.createSymbolicLink(dir.resolve("v.1"), secret);
        manifest(dir, "v.1", Files.size(secret));

        assertThatThrownBy(() -> a.committed(id))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("v.1");
        assertThat(remote(id)).isEmpty();
    }

    @Test
    void aManifestThatIsALinkIsNotRead() throws IOException {
        Path hostJson = Files.writeString(
                tmp.resolve("host.json"), "{\"generation\": 9, \"variables\": {}, \"token\": \"s3cr3t\"}");
        String id = "s-attack-manifest-link";
        Path dir = a.checkout(id);
        Files.createSymbolicLink(dir.resolve("manifest.json"), hostJson);

        assertThatThrownBy(() -> a.committed(id)).isInstanceOf(IOException.class);
        assertThat(remote(id)).isEmpty();
    }

    @Test
    void namesWithSeparatorsDotsOrAbsolutePathsAreRefused() throws IOException {
        Files.writeString(tmp.resolve("outside"), "outside the snapshot directory");
        String id = "s-attack-names";
        Path dir = a.checkout(id);
        for (String name : List.of(
                "../../../../outside",
                "/etc/passwd",
                "..",
                ".",
                "",
                "a/b",
                ".manifest.tmp",
                "manifest.json",
                "session.json",
                "x\u0000y")) {
            manifest(dir, name.replace("\u0000", "\\u0000"), 3);
            assertThatThrownBy(() -> a.committed(id)).as(name).isInstanceOf(IOException.class);
        }
        assertThat(remote(id)).isEmpty();
    }

    @Test
    void aFifoOrADirectoryIsRefusedWithoutBlocking() throws Exception {
        String id = "s-attack-fifo";
        Path dir = a.checkout(id);
        Process mkfifo = new ProcessBuilder("mkfifo", dir.resolve("v.1").toString()).start();
        assertThat(mkfifo.waitFor()).isZero();
        manifest(dir, "v.1", 0);
        assertThatThrownBy(() -> a.committed(id))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("not a regular file");
        Files.delete(dir.resolve("v.1"));
        Files.createDirectory(dir.resolve("v.1"));
        assertThatThrownBy(() -> a.committed(id)).isInstanceOf(IOException.class);
        assertThat(remote(id)).isEmpty();
    }

    @Test
    void aHugeSparseFileOrASizeOtherThanDeclaredIsRefused() throws IOException {
        String id = "s-attack-sparse";
        Path dir = a.checkout(id);
        try (var f = new java.io.RandomAccessFile(dir.resolve("v.1").toFile(), "rw")) {
            f.setLength(4L << 30);
        }
        manifest(dir, "v.1", 4L << 30);
        assertThatThrownBy(() -> a.committed(id))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("no kernel writes");
        manifest(dir, "v.1", 10);
        assertThatThrownBy(() -> a.committed(id))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("manifest says");
        manifest(dir, "v.1", -5);
        assertThatThrownBy(() -> a.committed(id)).isInstanceOf(IOException.class);
        assertThat(remote(id)).isEmpty();
    }

    @Test
    void aRemoteManifestCannotMakeTheServerWriteOutsideTheDirectoryOrThroughALink() throws IOException {
        String id = "s-attack-download";
        String base = location.prefix() + id + "/";
        s3.upload(location.bucket(), base + "v.1", new java.io.ByteArrayInputStream("abc".getBytes()), 3);
        s3.upload(location.bucket(), base + "x.1", new java.io.ByteArrayInputStream("xyz".getBytes()), 3);
        Path victim = Files.writeString(tmp.resolve("victim-" + run), "unchanged");

        byte[] bad = ("{\"generation\": 5, \"variables\": {\"v\": {\"file\": \"../../../victim-" + run
                        + "\", \"lengths\": [3]}}}")
                .getBytes(StandardCharsets.UTF_8);
        s3.upload(location.bucket(), base + "manifest.json", new java.io.ByteArrayInputStream(bad), bad.length);
        assertThatThrownBy(() -> b.checkout(id)).isInstanceOf(IOException.class);
        assertThat(Files.readString(victim)).isEqualTo("unchanged");

        // a name planted as a link in the local copy is replaced, not written through
        Path dir = nodeB.resolve("snapshots").resolve(id);
        Files.createDirectories(dir);
        Files.createSymbolicLink(dir.resolve("v.1"), victim);
        Files.createSymbolicLink(dir.resolve("manifest.json"), victim);
        byte[] good = "{\"generation\": 6, \"variables\": {\"v\": {\"file\": \"v.1\", \"lengths\": [3]}}}"
                .getBytes(StandardCharsets.UTF_8);
        s3.upload(location.bucket(), base + "manifest.json", new java.io.ByteArrayInputStream(good), good.length);
        b.checkout(id);
        assertThat(Files.readString(victim)).isEqualTo("unchanged");
        assertThat(Files.isSymbolicLink(dir.resolve("v.1"))).isFalse();
        assertThat(Files.readString(dir.resolve("v.1"))).isEqualTo("abc");
        assertThat(Files.readString(dir.resolve("manifest.json"))).contains("\"generation\": 6");

        // an object larger than its manifest says is cut off, not stored
        byte[] lying = "{\"generation\": 7, \"variables\": {\"x\": {\"file\": \"x.1\", \"lengths\": [1]}}}"
                .getBytes(StandardCharsets.UTF_8);
        s3.upload(location.bucket(), base + "manifest.json", new java.io.ByteArrayInputStream(lying), lying.length);
        assertThatThrownBy(() -> b.checkout(id)).isInstanceOf(IOException.class);
        assertThat(dir.resolve("x.1")).doesNotExist();
    }

    @Test
    void deletingASnapshotNeverFollowsALinkOutOfIt() throws IOException {
        Path outside = Files.createDirectories(tmp.resolve("keep-" + run));
        Files.writeString(outside.resolve("precious"), "keep me");
        String id = "s-attack-delete";
        Path dir = a.checkout(id);
        Files.createSymbolicLink(dir.resolve("link-dir"), outside);
        Files.createSymbolicLink(dir.resolve("link-file"), outside.resolve("precious"));
        Files.createDirectories(dir.resolve("sub/deeper"));
        Files.createSymbolicLink(dir.resolve("sub/deeper/up"), outside);
        a.delete(id);
        assertThat(dir).doesNotExist();
        assertThat(Files.readString(outside.resolve("precious"))).isEqualTo("keep me");
    }

    @Test
    void theDataToolsCannotReachTheSnapshotKeys() throws IOException {
        String id = "s-reserved";
        Path dir = a.checkout(id);
        snapshot(dir, 1, Map.of("x", "secret".getBytes(StandardCharsets.UTF_8)));
        a.committed(id);
        S3Store tools = s3.reserving(new S3Store.Reserved(location.bucket(), location.prefix()));
        String key = location.prefix() + id + "/x.1";
        for (String k : List.of(key, "./" + key, key.replace("/", "//"), "elsewhere/../" + key)) {
            assertThatThrownBy(() -> tools.open(location.bucket(), k))
                    .as(k)
                    .isInstanceOf(dev.rlmmcp.base.RlmException.class)
                    .hasMessageContaining("session snapshots");
        }
        assertThatThrownBy(() -> tools.upload(location.bucket(), key, new java.io.ByteArrayInputStream(new byte[1]), 1))
                .hasMessageContaining("session snapshots");
        assertThatThrownBy(() -> tools.delete(location.bucket(), key)).hasMessageContaining("session snapshots");
        assertThat(tools.list(location.bucket(), "", null, 1000).entries())
                .noneMatch(e -> e.key().startsWith(location.prefix()));
        assertThat(s3.list(location.bucket(), location.prefix(), null, 1000).entries())
                .isNotEmpty();
    }
}

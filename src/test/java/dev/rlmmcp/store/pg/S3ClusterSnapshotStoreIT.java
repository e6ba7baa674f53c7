package dev.rlmmcp.store.pg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rlmmcp.data.S3Settings;
import dev.rlmmcp.data.S3Store;
import dev.rlmmcp.e2e.support.PostgresServer;
import dev.rlmmcp.store.ClusterSessionDatabase.Pointer;
import dev.rlmmcp.store.NotHeldException;
import dev.rlmmcp.store.S3SnapshotStore;
import dev.rlmmcp.store.SnapshotStore;
import dev.rlmmcp.store.StateStore;
import dev.rlmmcp.testsupport.S3ProxyServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cluster mode's snapshots: two nodes, each with its own cache directory, sharing a real PostgreSQL
 * (pointers, epochs) and a real S3 (S3Proxy). Manifests are written here in the kernel's format.
 */
class S3ClusterSnapshotStoreIT {

    static final Duration LONG = Duration.ofSeconds(30);

    @TempDir
    static Path tmp;

    static PostgresServer pg;
    static S3ProxyServer s3server;
    static int run;

    @TempDir
    Path nodeA;

    @TempDir
    Path nodeB;

    S3SnapshotStore.Location location;
    PgCluster clusterA;
    PgCluster clusterB;
    StateStore a;
    StateStore b;
    S3Store s3;

    @BeforeAll
    static void start() throws IOException {
        pg = PostgresServer.start();
        s3server = S3ProxyServer.start(tmp.resolve("s3"));
        try (S3Store warm = s3()) {
            warm.ensureBucket("snapshots"); // S3Proxy's first requests are slow: not within a short lease
        }
    }

    @AfterAll
    static void stop() {
        s3server.close();
        pg.close();
    }

    @BeforeEach
    void nodes() {
        String name = "c" + (++run);
        pg.createDatabase(name);
        location = S3SnapshotStore.Location.parse("s3://snapshots/" + name);
        clusterA = PgCluster.open(pg.url(name), "node-a", "a:1");
        clusterB = PgCluster.open(pg.url(name), "node-b", "b:1");
        a = StateStore.openCluster(nodeA, Duration.ofSeconds(1), false, clusterA.sessions(), s3(), location, 1L << 30);
        b = StateStore.openCluster(nodeB, Duration.ofSeconds(1), false, clusterB.sessions(), s3(), location, 1L << 30);
        s3 = s3();
    }

    private static S3Store s3() {
        Duration t = Duration.ofSeconds(30);
        return new S3Store(S3Settings.fromEnv(s3server.env(), "unused"), t, t);
    }

    @AfterEach
    void close() {
        a.close();
        b.close();
        s3.close();
        clusterA.close();
        clusterB.close();
    }

    @Test
    void aTakeoverReadsThePointedSnapshotAndMovesItToTheNewEpoch() throws IOException, InterruptedException {
        clusterA.leases().renew(LONG);
        clusterA.leases().claim("s1");
        Path dir = a.snapshots().checkout("s1");
        snapshot(dir, 1, Map.of("x", "one", "y", "why"));
        a.snapshots().committed("s1");
        snapshot(dir, 2, Map.of("x", "two"));
        a.snapshots().committed("s1");
        eventually(() -> assertThat(remote("s1")).containsOnlyKeys("e1/manifest-2.json", "e1/x.2"));
        assertThat(clusterA.sessions().pointer("s1")).hasValue(new Pointer(1, 2));

        lapse(clusterA);
        clusterB.leases().renew(LONG);
        assertThat(clusterB.leases().acquire("s1")).hasValue(2);
        Path there = b.snapshots().checkout("s1");
        assertThat(Files.readString(there.resolve("x.2"))).isEqualTo("two");
        assertThat(there.resolve("y.1")).doesNotExist();

        snapshot(there, 3, Map.of("x", "two", "z", "zed"));
        b.snapshots().committed("s1");
        eventually(() -> assertThat(remote("s1")).containsOnlyKeys("e2/manifest-3.json", "e2/x.2", "e2/z.3"));
        assertThat(clusterB.sessions().pointer("s1")).hasValue(new Pointer(2, 3));
    }

    @Test
    void aZombieUploadCannotChangeWhatTheNewOwnerSees() throws IOException, InterruptedException {
        clusterA.leases().renew(LONG);
        clusterA.leases().claim("s1");
        Path dir = a.snapshots().checkout("s1");
        snapshot(dir, 1, Map.of("x", "reported"));
        a.snapshots().committed("s1");

        lapse(clusterA);
        clusterB.leases().renew(LONG);
        clusterB.leases().acquire("s1");
        clusterA.leases().renew(LONG); // A comes back from a partition, still believing it holds epoch 1

        snapshot(dir, 2, Map.of("x", "zombie", "w", "zombie"));
        assertThatThrownBy(() -> a.snapshots().committed("s1"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("owned by another node");
        assertThat(clusterB.sessions().pointer("s1")).hasValue(new Pointer(1, 1));
        Path there = b.snapshots().checkout("s1");
        assertThat(Files.readString(there.resolve("manifest.json"))).contains("\"generation\": 1");
        assertThat(Files.readString(there.resolve("x.1"))).isEqualTo("reported");
        assertThat(there.resolve("x.2")).doesNotExist();

        snapshot(there, 2, Map.of("x", "new owner"));
        b.snapshots().committed("s1");
        eventually(() -> assertThat(remote("s1")).containsOnlyKeys("e2/manifest-2.json", "e2/x.2"));
        // refused once, the zombie has forgotten its epoch: it uploads nothing more
        assertThatThrownBy(() -> a.snapshots().committed("s1")).isInstanceOf(IOException.class);
        assertThat(remote("s1")).containsOnlyKeys("e2/manifest-2.json", "e2/x.2");
        assertThat(clusterB.sessions().pointer("s1")).hasValue(new Pointer(2, 2));
        snapshot(there, 3, Map.of("x", "new owner"));
        b.snapshots().committed("s1");
        assertThat(remote("s1")).containsEntry("e2/x.2", 9L);
        snapshot(there, 32, Map.of("x", "new owner"));
        b.snapshots().committed("s1");
        eventually(() -> assertThat(remote("s1")).containsOnlyKeys("e2/manifest-32.json", "e2/x.32"));

        // the zombie, given the session back later, does not trust its own older local copy
        b.snapshots().close();
        clusterB.leases().release("s1");
        clusterA.leases().dropAll(); // as its NodeLease does when it fences itself
        // a call admitted before the fence finds the session not held: refused as not run here, not as a fault
        assertThatThrownBy(() -> a.snapshots().checkout("s1"))
                .isInstanceOf(NotHeldException.class)
                .hasMessageContaining("no longer owns session s1");
        assertThat(clusterA.leases().acquire("s1")).hasValue(3);
        Path back = a.snapshots().checkout("s1");
        assertThat(Files.readString(back.resolve("x.32"))).isEqualTo("new owner");
        assertThat(back.resolve("w.2")).doesNotExist();
        assertThat(back.resolve("x.2")).doesNotExist();
    }

    @Test
    void stepsReachTheClusterBeforeTheReply() throws IOException {
        clusterA.leases().renew(LONG);
        clusterA.leases().claim("s1");
        Path dir = a.snapshots().checkout("s1");
        snapshot(dir, 1, Map.of("x", "1"));
        a.write("step", db -> db.append("s1", "{\"steps\":1}", 0, "{\"index\":0}", 100));
        assertThat(a.beforeReply("s1")).isNull();
        assertThat(clusterB.sessions().find("s1", 100).orElseThrow().trace()).containsExactly("{\"index\":0}");
        assertThat(clusterB.sessions().pointer("s1")).hasValue(new Pointer(1, 1));
        assertThat(b.snapshots().find("s1").orElseThrow().record()).isEqualTo("{\"steps\":1}");
        assertThat(a.snapshots().copiesRecords()).isFalse();
    }

    @Test
    void deleteLeavesTheSnapshotOfASessionItNoLongerOwns() throws IOException, InterruptedException {
        clusterA.leases().renew(LONG);
        clusterA.leases().claim("s1");
        clusterA.leases().claim("s2");
        for (String id : new String[] {"s1", "s2"}) {
            snapshot(a.snapshots().checkout(id), 1, Map.of("x", id));
            a.snapshots().committed(id);
        }
        clusterA.sessions().delete("s1");
        a.snapshots().delete("s1");
        assertThat(remote("s1")).isEmpty();

        lapse(clusterA);
        clusterB.leases().renew(LONG);
        clusterB.leases().acquire("s2");
        clusterA.leases().renew(LONG);
        assertThatThrownBy(() -> clusterA.sessions().delete("s2")).isInstanceOf(RuntimeException.class);
        assertThatThrownBy(() -> a.snapshots().delete("s2")).isInstanceOf(IOException.class);
        assertThat(remote("s2")).containsOnlyKeys("e1/manifest-1.json", "e1/x.1");
        SnapshotStore bs = b.snapshots();
        assertThat(Files.readString(bs.checkout("s2").resolve("x.1"))).isEqualTo("s2");
    }

    /** Writes variable files and the manifest naming them, as the kernel does. */
    private static void snapshot(Path dir, int generation, Map<String, String> variables) throws IOException {
        StringBuilder entries = new StringBuilder();
        for (Map.Entry<String, String> v : new TreeMap<>(variables).entrySet()) {
            String file = v.getKey() + "." + generation;
            byte[] bytes = v.getValue().getBytes(StandardCharsets.UTF_8);
            if (Files.exists(dir.resolve(v.getKey() + "." + (generation - 1)))
                    && Files.readString(dir.resolve(v.getKey() + "." + (generation - 1)))
                            .equals(v.getValue())) {
                file = v.getKey() + "." + (generation - 1); // unchanged: the kernel keeps its file
            } else {
                Files.write(dir.resolve(file), bytes);
            }
            entries.append(entries.isEmpty() ? "" : ", ")
                    .append("\"")
                    .append(v.getKey())
                    .append("\": {\"kind\": \"bytes\", \"file\": \"")
                    .append(file)
                    .append("\", \"lengths\": [")
                    .append(bytes.length)
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

    /** Lets a node's lease lapse in the database, as when its heartbeats stop. */
    static void lapse(PgCluster node) throws InterruptedException {
        node.leases().renew(Duration.ofMillis(1));
        Thread.sleep(20);
    }

    /** Obsolete keys are removed in the background, after the snapshot that made them obsolete. */
    private static void eventually(Runnable assertion) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            try {
                assertion.run();
                return;
            } catch (AssertionError notYet) {
                if (System.nanoTime() > deadline) {
                    throw notYet;
                }
                Thread.sleep(50);
            }
        }
    }
}

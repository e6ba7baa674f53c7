package dev.rlmmcp.store.pg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rlmmcp.e2e.support.PostgresServer;
import dev.rlmmcp.store.ClusterSessionDatabase.Pointer;
import dev.rlmmcp.store.SessionDatabase;
import dev.rlmmcp.store.StoreException;
import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Leases, ownership and fencing against a real PostgreSQL, two "nodes" sharing one database. */
class PgClusterIT {

    static final Duration LONG = Duration.ofSeconds(30);

    static PostgresServer pg;
    static int run;

    String url;
    String jdbcUrl;
    PgCluster a;
    PgCluster b;

    @BeforeAll
    static void start() throws IOException {
        pg = PostgresServer.start("127.0.0.1", "pw:with@odd/chars");
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    @BeforeEach
    void nodes() {
        String name = "t" + (++run);
        jdbcUrl = pg.createDatabase(name);
        url = pg.url(name);
        a = PgCluster.open(url, "node-a", "10.0.0.1:7001");
        b = PgCluster.open(url, "node-b", "10.0.0.2:7001");
    }

    @AfterEach
    void close() {
        a.close();
        b.close();
    }

    @Test
    void schemaIsCreatedOnceEvenByNodesStartingTogether() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<PgCluster>> opened = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                String node = "n" + i;
                opened.add(pool.submit((Callable<PgCluster>) () -> PgCluster.open(url, node, "x:1")));
            }
            for (Future<PgCluster> f : opened) {
                f.get().close();
            }
        } finally {
            pool.shutdown();
        }
        assertThat(query("SELECT count(*) || ':' || max(version) FROM rlm_schema"))
                .isEqualTo("1:" + Schema.current());
    }

    @Test
    void aSessionIsTakenOverOnlyOnceItsOwnersLeaseExpired() throws Exception {
        a.leases().renew(LONG);
        b.leases().renew(LONG);
        assertThat(a.leases().claim("s1")).isEqualTo(1);
        assertThat(a.leases().held("s1")).hasValue(1);
        assertThat(b.leases().acquire("s1")).isEmpty();
        assertThat(b.leases().owner("s1")).hasValue(new Leases.Owner("node-a", "10.0.0.1:7001", 1, true));

        lapse(a);
        assertThat(b.leases().owner("s1").orElseThrow().live()).isFalse();
        assertThat(b.leases().acquire("s1")).hasValue(2);
        assertThat(b.leases().acquire("s1")).hasValue(2);
        assertThat(b.leases().owner("s1")).hasValue(new Leases.Owner("node-b", "10.0.0.2:7001", 2, true));
        assertThat(b.leases().owner("nope")).isEmpty();
        assertThat(b.leases().acquire("nope")).isEmpty();
    }

    @Test
    void writesOfAnOldEpochAreRefusedAndChangeNothing() throws Exception {
        a.leases().renew(LONG);
        a.leases().claim("s1");
        a.sessions().append("s1", "{\"v\":1}", 0, "{\"index\":0}", SessionDatabase.TRACE_KEPT);
        a.sessions().point("s1", new Pointer(1, 1));
        lapse(a);
        b.leases().renew(LONG);
        assertThat(b.leases().acquire("s1")).hasValue(2);
        b.sessions().append("s1", "{\"v\":2}", 1, "{\"index\":1}", SessionDatabase.TRACE_KEPT);
        b.sessions().point("s1", new Pointer(2, 5));

        a.leases().renew(LONG); // back from a partition, still believing it holds epoch 1
        assertThat(a.leases().held("s1")).hasValue(1);
        assertThatThrownBy(() -> a.sessions().save("s1", "{\"v\":\"zombie\"}")).isInstanceOf(StoreException.class);
        assertThatThrownBy(() -> a.sessions().append("s1", "{\"v\":\"zombie\"}", 1, "{\"zombie\":1}", 100))
                .isInstanceOf(StoreException.class);
        assertThatThrownBy(() -> a.sessions().point("s1", new Pointer(1, 9))).isInstanceOf(StoreException.class);
        assertThatThrownBy(() -> a.sessions().delete("s1")).isInstanceOf(StoreException.class);
        a.leases().release("s1");

        SessionDatabase.StoredSession seen = a.sessions().find("s1", 100).orElseThrow();
        assertThat(seen.record()).isEqualTo("{\"v\":2}");
        assertThat(seen.trace()).containsExactly("{\"index\":0}", "{\"index\":1}");
        assertThat(a.sessions().pointer("s1")).hasValue(new Pointer(2, 5));
        assertThat(b.leases().owner("s1").orElseThrow().nodeId()).isEqualTo("node-b");
    }

    @Test
    void aBatchWithARefusedWriteKeepsNone() {
        a.leases().renew(LONG);
        a.leases().claim("mine");
        b.leases().renew(LONG);
        b.leases().claim("theirs");
        List<Consumer<SessionDatabase>> writes =
                List.of(db -> db.save("mine", "{\"v\":1}"), db -> db.save("theirs", "{\"v\":1}"));
        assertThatThrownBy(() -> a.sessions().inOneTransaction(writes)).isInstanceOf(StoreException.class);
        assertThat(a.sessions().find("mine", 1)).isEmpty();
        a.sessions().inOneTransaction(writes.subList(0, 1));
        assertThat(a.sessions().find("mine", 1).orElseThrow().record()).isEqualTo("{\"v\":1}");
    }

    @Test
    void aNodeWithoutALiveLeaseTakesNothing() throws Exception {
        assertThatThrownBy(() -> a.leases().claim("s1")).isInstanceOf(StoreException.class);
        a.leases().renew(LONG);
        a.leases().claim("s1");
        a.sessions().save("s1", "{}");
        lapse(a);
        assertThatThrownBy(() -> a.sessions().save("s1", "{\"late\":1}")).isInstanceOf(StoreException.class);
        a.leases().dropAll();
        a.leases().renew(LONG);
        assertThatThrownBy(() -> a.sessions().save("s1", "{\"late\":2}")).isInstanceOf(StoreException.class);
        assertThat(a.leases().acquire("s1")).hasValue(2);
        a.sessions().save("s1", "{\"v\":2}");
        assertThat(a.sessions().find("s1", 1).orElseThrow().record()).isEqualTo("{\"v\":2}");
    }

    @Test
    void releaseAndLeaveLetOthersTakeOverAtOnce() {
        a.leases().renew(LONG);
        b.leases().renew(LONG);
        a.leases().claim("s1");
        a.leases().claim("s2");
        a.leases().release("s1");
        assertThat(a.leases().held("s1")).isEmpty();
        assertThat(b.leases().owner("s1")).hasValue(new Leases.Owner(null, null, 1, false));
        assertThat(b.leases().acquire("s1")).hasValue(2);
        assertThat(b.leases().acquire("s2")).isEmpty();
        a.leases().draining();
        a.leases().leave();
        assertThat(b.leases().liveNode("node-a")).isEmpty();
        assertThat(b.leases().liveNode("node-b")).hasValue(new Leases.Owner("node-b", "10.0.0.2:7001", 0, true));
        assertThat(b.leases().acquire("s2")).hasValue(2);
        assertThatThrownBy(() -> a.sessions().save("s2", "{}")).isInstanceOf(StoreException.class);
    }

    @Test
    void listsTheClusterAndEachNodesOwnRecords() throws SQLException {
        a.leases().renew(LONG);
        b.leases().renew(LONG);
        a.leases().claim("s1");
        a.sessions().save("s1", "{\"n\":1}");
        b.leases().claim("s2");
        b.sessions().save("s2", "{\"n\":2}");
        b.leases().claim("s3");
        assertThat(a.leases().sessions())
                .containsExactly(
                        new Leases.Listed("s1", new Leases.Owner("node-a", "10.0.0.1:7001", 1, true), "{\"n\":1}"),
                        new Leases.Listed("s2", new Leases.Owner("node-b", "10.0.0.2:7001", 1, true), "{\"n\":2}"),
                        new Leases.Listed("s3", new Leases.Owner("node-b", "10.0.0.2:7001", 1, true), null));
        assertThat(a.sessions().records()).containsExactly(new SessionDatabase.StoredRecord("s1", "{\"n\":1}"));
        assertThat(b.sessions().records())
                .extracting(SessionDatabase.StoredRecord::id)
                .containsExactly("s2");
        b.sessions().delete("s2");
        assertThat(b.leases().held("s2")).isEmpty();
        assertThat(a.leases().sessions()).extracting(Leases.Listed::id).containsExactly("s1", "s3");
        assertThat(query("SELECT count(*) FROM rlm_trace WHERE session_id = 's2'"))
                .isEqualTo("0");
    }

    @Test
    void keepsTheLastTraceEntriesAsTheSqliteDatabaseDoes() {
        a.leases().renew(LONG);
        a.leases().claim("s1");
        List<Consumer<SessionDatabase>> steps = new ArrayList<>();
        for (int i = 0; i <= 1000; i++) {
            int index = i;
            steps.add(db -> db.append("s1", "{\"steps\":" + index + "}", index, "{\"index\":" + index + "}", 10));
        }
        a.sessions().inOneTransaction(steps);
        assertThat(a.sessions().find("s1", 3).orElseThrow())
                .isEqualTo(new SessionDatabase.StoredSession(
                        "s1", "{\"steps\":1000}", List.of("{\"index\":998}", "{\"index\":999}", "{\"index\":1000}")));
        assertThat(a.sessions().trace("s1", 100)).hasSize(10); // trimmed at index 1000 to the last 10
        a.sessions().adopt(new SessionDatabase.StoredSession("s1", "{\"adopted\":true}", List.of()));
        assertThat(b.sessions().find("s1", 100).orElseThrow().record()).isEqualTo("{\"adopted\":true}");
        assertThat(b.sessions().trace("s1", 100)).hasSize(10);
    }

    @Test
    void remembersTheHomeOfEachMcpSession() throws Exception {
        a.leases().renew(LONG);
        a.leases().recordMcpSession("m1", "{\"method\":\"initialize\"}");
        assertThat(b.leases().mcpSession("m1"))
                .hasValue(new Leases.McpHome(
                        new Leases.Owner("node-a", "10.0.0.1:7001", 0, true), "{\"method\":\"initialize\"}"));
        lapse(a);
        assertThat(b.leases().mcpSession("m1").orElseThrow().home().live()).isFalse();
        b.leases().renew(LONG);
        b.leases().recordMcpSession("m1", null); // adopted: the initialize request is kept
        assertThat(a.leases().mcpSession("m1"))
                .hasValue(new Leases.McpHome(
                        new Leases.Owner("node-b", "10.0.0.2:7001", 0, true), "{\"method\":\"initialize\"}"));
        b.leases().forgetMcpSession("m1");
        assertThat(a.leases().mcpSession("m1")).isEmpty();
    }

    @Test
    void anUnreachableDatabaseFailsWithinSeconds() {
        long started = System.nanoTime();
        assertThatThrownBy(() -> PgCluster.open("postgresql://u:secret@10.255.255.1:5432/db", "n", "x:1"))
                .isInstanceOf(StoreException.class)
                .hasMessageNotContaining("secret");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
    }

    private String query(String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(jdbcUrl);
                Statement s = c.createStatement();
                ResultSet r = s.executeQuery(sql)) {
            r.next();
            return r.getString(1);
        }
    }

    /** Lets a node's lease lapse in the database, as when its heartbeats stop. */
    static void lapse(PgCluster node) throws InterruptedException {
        node.leases().renew(Duration.ofMillis(1));
        Thread.sleep(20);
    }
}

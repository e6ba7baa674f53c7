package dev.rlmmcp.core;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.data.S3Settings;
import dev.rlmmcp.data.S3Store;
import dev.rlmmcp.e2e.support.PostgresServer;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.store.ClusterSessionDatabase.Pointer;
import dev.rlmmcp.store.S3SnapshotStore;
import dev.rlmmcp.store.StateStore;
import dev.rlmmcp.store.pg.PgCluster;
import dev.rlmmcp.testsupport.S3ProxyServer;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cluster mode under real kernels: what a step's reply reports is in PostgreSQL and S3 when the reply
 * comes, so another node that takes the session over (its owner gone) has every variable.
 */
class ClusterPersistenceIT {

    private static final Duration T = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : opened.reversed()) {
            c.close();
        }
    }

    private <C extends AutoCloseable> C open(C c) {
        opened.add(c);
        return c;
    }

    private Sessions node(String name, PgCluster cluster, S3ProxyServer s3, S3SnapshotStore.Location location) {
        StateStore store = StateStore.openCluster(
                dir.resolve(name),
                Duration.ofSeconds(2),
                false,
                cluster.sessions(),
                new S3Store(S3Settings.fromEnv(s3.env(), "unused"), T, T),
                location,
                1L << 30);
        return open(new Sessions(
                new KernelFactory(
                        TestSettings.in(dir.resolve(name + "-kernel"), 1L << 30),
                        new ProcessLauncher(),
                        new ObjectMapper()),
                store));
    }

    private static String out(Session session, String code) {
        ObjectNode reply = TestReplies.step(session.execute(StepRequest.of(code, T)));
        assertThat(reply.path("error").isObject()).as(reply.toString()).isFalse();
        return reply.path("stdout").asText();
    }

    @Test
    void whatAReplyReportsIsInTheClusterWhenItComes() throws IOException, InterruptedException {
        PostgresServer pg = open(PostgresServer.start());
        S3ProxyServer s3 = open(S3ProxyServer.start(dir.resolve("s3")));
        S3SnapshotStore.Location location = S3SnapshotStore.Location.parse("s3://snapshots/cluster");
        PgCluster clusterA = open(PgCluster.open(pg.url(), "node-a", "a:1"));
        PgCluster clusterB = open(PgCluster.open(pg.url(), "node-b", "b:1"));
        clusterA.leases().renew(T);
        clusterB.leases().renew(T);
        Sessions a = node("a", clusterA, s3, location);
        Sessions b = node("b", clusterB, s3, location);

        Session session = a.create("work", Limits.NONE);
        clusterA.leases().claim(session.id());
        out(session, "x = 41 + 1\nwords = ['alpha', 'beta']");
        Pointer after = clusterB.sessions().pointer(session.id()).orElseThrow();
        assertThat(clusterB.sessions().trace(session.id(), 10)).hasSize(1);
        out(session, "words.append('gamma')");
        assertThat(clusterB.sessions().pointer(session.id()).orElseThrow().generation())
                .isGreaterThan(after.generation());

        clusterA.leases().renew(Duration.ofMillis(1)); // node A stops renewing: its lease lapses
        Thread.sleep(20);
        assertThat(clusterB.leases().acquire(session.id())).hasValue(2);
        Session there = b.get(session.id());
        assertThat(out(there, "print(x, words)")).isEqualTo("42 ['alpha', 'beta', 'gamma']\n");
        assertThat(TestReplies.trace(there.trace(0, 100)).path("steps")).hasSize(3);

        // node A, which lost the session but has not noticed, says that its step was not saved
        ObjectNode stale = TestReplies.step(session.execute(StepRequest.of("y = 5", T)));
        assertThat(stale.path("not_saved").toString()).isEqualTo("[\"y\"]");
        assertThat(out(there, "print('y' in dir())")).isEqualTo("False\n");
    }
}

package dev.rlmmcp.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.Ownership;
import dev.rlmmcp.e2e.support.PostgresServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Routing and ownership over a real PostgreSQL, with two or three nodes of a short lease and no servers. */
class LeaseRouterIT {

    private static final Duration LEASE = Duration.ofMillis(1000);

    private PostgresServer postgres;
    private String url;
    private final List<ClusterNode> nodes = new ArrayList<>();
    private int next = 20001;

    @BeforeEach
    void start() throws Exception {
        postgres = PostgresServer.start();
        postgres.createDatabase("rlm");
        url = postgres.url("rlm");
    }

    @AfterEach
    void stop() {
        nodes.forEach(ClusterNode::close);
        postgres.close();
    }

    private ClusterNode node() {
        ClusterNode node = ClusterNode.open(
                new ClusterSettings(url, "127.0.0.1:" + next++, "a-secret-of-the-test-cluster", LEASE));
        nodes.add(node);
        node.start(null);
        return node;
    }

    @Test
    void aSessionIsRoutedToItsLiveOwnerAndTakenOverOnceItsLeaseExpired() throws Exception {
        ClusterNode a = node();
        ClusterNode b = node();
        Ownership onA = a.ownership();
        onA.claim("s-one");
        assertThat(a.router().route("s-one")).isEqualTo(new Router.Local());
        assertThat(b.router().route("s-one"))
                .isEqualTo(new Router.Remote(a.nodeId(), a.settings().nodeAddress()));
        assertThat(b.router().route("s-unknown")).as("new or not found: here").isEqualTo(new Router.Local());
        assertThat(b.ownership().acquire("s-one")).isFalse();
        assertThat(b.ownership().liveOwnerElsewhere("s-one")).contains(a.nodeId());
        assertThat(b.ownership().elsewhere()).singleElement().satisfies(e -> {
            assertThat(e.ownerNode()).isEqualTo(a.nodeId());
            assertThat(e.live()).isTrue();
        });

        a.lease().close(); // a dead node: no more heartbeats, nothing released
        assertThat(b.router().route("s-one")).isInstanceOf(Router.Remote.class);
        Thread.sleep(LEASE.toMillis() + 300);
        assertThat(b.router().route("s-one")).as("taken over").isEqualTo(new Router.Local());
        assertThat(b.ownership().holds("s-one")).isTrue();
        assertThat(b.leases().held("s-one")).hasValue(2);

        assertThat(b.ownership().claimOffered("s-offered")).isTrue();
        assertThat(b.ownership().claimOffered("s-offered")).as("known now").isFalse();
        assertThat(b.ownership().claimOffered("s-one")).isFalse();

        ClusterNode cutOff = ClusterNode.open(
                new ClusterSettings(url, "127.0.0.1:" + next++, "a-secret-of-the-test-cluster", LEASE));
        nodes.add(cutOff); // never renewed its lease, as a node fenced from the database
        assertThatThrownBy(() -> cutOff.ownership().acquire("s-one"))
                .isInstanceOfSatisfying(
                        RlmException.class,
                        e -> assertThat(e.code())
                                .as("nothing ran: the node's 503 over HTTP")
                                .isEqualTo(ErrorCode.SESSION_MOVED))
                .hasMessageContaining("cannot renew its lease");
        assertThat(cutOff.ownership().holds("s-one")).isFalse();
        assertThat(cutOff.router().admit("s-one")).isNull();
    }

    @Test
    void aDrainingNodeTakesNothingNewThenHandsOver() {
        ClusterNode a = node();
        ClusterNode b = node();
        a.ownership().claim("s-held");
        b.ownership().claim("s-theirs");
        b.handOver(Duration.ofSeconds(5)); // b leaves at once, its session released
        a.lease().drain();
        assertThat(a.router().serving()).isFalse();
        assertThat(a.ownership().acquire("s-theirs"))
                .as("a draining node takes nothing")
                .isFalse();

        ClusterNode c = node();
        assertThat(c.router().route("s-theirs")).as("released: taken at once").isEqualTo(new Router.Local());
        a.handOver(Duration.ofSeconds(5));
        assertThat(c.router().route("s-held")).as("left: taken at once").isEqualTo(new Router.Local());
    }
}

package dev.rlmmcp.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class PeerAuthTest {

    private static final String SECRET = "a shared secret of the cluster";
    private static final Instant NOW = Instant.parse("2026-11-27T20:00:00Z");

    private static PeerAuth at(String secret, String node, Instant now) {
        return new PeerAuth(secret, node, Clock.fixed(now, ZoneOffset.UTC));
    }

    @Test
    void aSignedRequestNamesItsNode() {
        String header = at(SECRET, "node-a", NOW).sign("POST", "/mcp");
        assertThat(header).startsWith("node-a." + NOW.toEpochMilli() + ".");
        assertThat(at(SECRET, "node-b", NOW).verify(header, "POST", "/mcp")).contains("node-a");
    }

    @Test
    void aHeaderIsGoodOnlyWithinThirtySecondsEitherSide() {
        String header = at(SECRET, "node-a", NOW).sign("POST", "/mcp");
        assertThat(at(SECRET, "b", NOW.plusSeconds(29)).verify(header, "POST", "/mcp"))
                .isPresent();
        assertThat(at(SECRET, "b", NOW.minusSeconds(29)).verify(header, "POST", "/mcp"))
                .isPresent();
        assertThat(at(SECRET, "b", NOW.plus(Duration.ofMillis(30_001))).verify(header, "POST", "/mcp"))
                .isEmpty();
        assertThat(at(SECRET, "b", NOW.minusSeconds(31)).verify(header, "POST", "/mcp"))
                .isEmpty();
    }

    @Test
    void anotherSecretATamperedTargetMethodNodeOrTimeIsRefused() {
        String header = at(SECRET, "node-a", NOW).sign("POST", "/mcp?x=1");
        PeerAuth receiver = at(SECRET, "b", NOW);
        assertThat(at("another secret of the cluster", "b", NOW).verify(header, "POST", "/mcp?x=1"))
                .isEmpty();
        assertThat(receiver.verify(header, "POST", "/rpc?x=1")).isEmpty();
        assertThat(receiver.verify(header, "POST", "/mcp?x=2")).isEmpty();
        assertThat(receiver.verify(header, "DELETE", "/mcp?x=1")).isEmpty();
        assertThat(receiver.verify(header.replace("node-a.", "node-c."), "POST", "/mcp?x=1"))
                .isEmpty();
        String[] parts = header.split("\\.");
        String earlier = parts[0] + "." + (Long.parseLong(parts[1]) - 1) + "." + parts[2];
        assertThat(receiver.verify(earlier, "POST", "/mcp?x=1")).isEmpty();
    }

    @Test
    void malformedHeadersAreRefusedWithoutThrowing() {
        PeerAuth receiver = at(SECRET, "b", NOW);
        for (String header : new String[] {null, "", "node", "node.1", ".1.ab", "node.x.ab", "node.1.zz", "node.1."}) {
            assertThat(receiver.verify(header, "POST", "/mcp")).as(header).isEmpty();
        }
    }

    @Test
    void aShortSecretOrADottedNodeIdIsRefusedAndTheSecretNeverPrinted() {
        assertThatThrownBy(() -> new PeerAuth("short", "a"))
                .hasMessageContaining("RLM_CLUSTER_SECRET")
                .hasMessageNotContaining("short");
        assertThatThrownBy(() -> new PeerAuth(SECRET, "a.b")).hasMessageContaining("node id");
        assertThat(new PeerAuth(SECRET, "a").toString()).doesNotContain(SECRET);
    }

    @Test
    void aTagNamesItsNodeToEveryNodeOfTheClusterAndToNoOther() {
        String tag = at(SECRET, "node-a", NOW).tag("10.0.0.5:7001");
        assertThat(tag).startsWith("node-a~10.0.0.5:7001~").endsWith("~");
        String taskId = tag + "5b1c-uuid";
        assertThat(at(SECRET, "node-b", NOW).tagged(taskId)).contains(new Router.Remote("node-a", "10.0.0.5:7001"));
        assertThat(at("another secret of the cluster", "b", NOW).tagged(taskId)).isEmpty();
        assertThat(at(SECRET, "b", NOW).tagged(taskId.replace("10.0.0.5", "10.6.6.6")))
                .isEmpty();
        assertThat(at(SECRET, "b", NOW).tagged("5b1c-uuid")).isEmpty();
        assertThat(at(SECRET, "b", NOW).tagged(null)).isEmpty();
    }
}

package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.ClosedAfterEach;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.PostgresServer;
import dev.rlmmcp.e2e.support.ServerProcess;
import dev.rlmmcp.e2e.support.SessionCalls;
import dev.rlmmcp.testsupport.S3ProxyServer;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two real {@code serve} nodes of one cluster on loopback ports, sharing a real PostgreSQL and a real S3
 * (S3Proxy): a session created on node A is served through node B while A lives (its owner is A), and
 * after A is killed with SIGKILL and its lease has expired, B takes it over with every variable a reply
 * reported; a node stopped with SIGTERM hands its sessions over, so another takes them at once.
 */
class ClusterTakeoverIT {

    private static final long LEASE_MS = 1000;

    @TempDir
    Path tmp;

    @RegisterExtension
    final ClosedAfterEach open = new ClosedAfterEach();

    private Map<String, String> env;
    private String database;

    private ServerProcess node(String name) throws IOException {
        ServerProcess server = ServerProcess.http(
                env,
                "--state-dir",
                tmp.resolve(name).toString(),
                "--snapshot-s3",
                "s3://rlm-snapshots/cluster",
                "--cluster-db",
                database,
                "--node-address",
                "127.0.0.1:" + freePort(),
                "--cluster-lease-ms",
                String.valueOf(LEASE_MS));
        return open.add(server);
    }

    private SessionCalls client(ServerProcess server) {
        return new SessionCalls(open.add(McpDriver.http(server.mcpUrl())));
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static JsonNode listed(SessionCalls calls, String id) {
        for (JsonNode s : calls.ok("rlm_sessions", Map.of()).path("sessions")) {
            if (s.path("session_id").asText().equals(id)) {
                return s;
            }
        }
        throw new AssertionError("session " + id + " not listed");
    }

    /** PostgreSQL and S3, as the nodes of both tests share them. */
    private void startSharedState() throws Exception {
        PostgresServer postgres = open.add(PostgresServer.start());
        postgres.createDatabase("rlm");
        database = postgres.url("rlm");
        S3ProxyServer s3 = open.add(S3ProxyServer.start(tmp.resolve("s3")));
        env = new HashMap<>(s3.env());
        env.put("RLM_CLUSTER_SECRET", "cluster-takeover-it-secret");
    }

    @Test
    void aSessionOfAKilledNodeIsTakenOverWithItsVariables() throws Exception {
        startSharedState();
        ServerProcess a = node("a");
        ServerProcess b = node("b");
        SessionCalls onA = client(a);
        SessionCalls onB = client(b);
        String id = onA.ok("rlm_init_context", Map.of("context_text", "alpha\nbeta\n", "data_type", "lines"))
                .path("session_id")
                .asText();
        onA.run(id, "x = 41\nrows = [len(l) for l in context]");

        JsonNode elsewhere = listed(onB, id);
        assertThat(elsewhere.path("owner_node").asText())
                .as(elsewhere.toString())
                .startsWith("n-");
        assertThat(onB.run(id, "print(x + 1, rows)"))
                .as("served by its live owner A through B")
                .isEqualTo("42 [5, 4]\n");
        onA.run(id, "x = 99");

        a.kill();
        Thread.sleep(LEASE_MS + 500);
        assertThat(onB.run(id, "print(x, rows)")).isEqualTo("99 [5, 4]\n");
        JsonNode taken = listed(onB, id);
        assertThat(taken.path("owner_node").asText())
                .as("now B's own, named as such: %s", taken)
                .startsWith("n-")
                .isNotEqualTo(elsewhere.path("owner_node").asText());
        assertThat(b.log()).contains("taken from the snapshot store").doesNotContain("cluster-takeover-it-secret");
    }

    @Test
    void aNodeStoppedWithSigtermHandsItsSessionsOverAtOnce() throws Exception {
        startSharedState();
        ServerProcess a = node("a");
        ServerProcess b = node("b");
        SessionCalls onA = client(a);
        SessionCalls onB = client(b);
        String id = onA.ok("rlm_init_context", Map.of("context_text", "one\n", "data_type", "lines"))
                .path("session_id")
                .asText();
        onA.run(id, "y = {'k': [1, 2, 3]}");

        long stopping = System.nanoTime();
        assertThat(a.terminate()).isIn(0, 143);
        // its log after SIGTERM cannot be read here: Process.destroy() closes the pipe
        assertThat(listed(onB, id).has("owner_node")).as("released: no owner").isFalse();
        assertThat(onB.run(id, "print(y['k'])")).isEqualTo("[1, 2, 3]\n");
        assertThat(Duration.ofNanos(System.nanoTime() - stopping))
                .as("taken over at once, not after the lease expired")
                .isLessThan(Duration.ofSeconds(20));
    }

    @Test
    void aStepSuspendedForTheAgentIsAnsweredThroughAnyNode() throws Exception {
        startSharedState();
        ServerProcess a = node("a");
        ServerProcess b = node("b");
        SessionCalls onA = client(a);
        McpDriver throughB = open.add(McpDriver.http(b.mcpUrl()));
        SessionCalls onB = new SessionCalls(throughB);
        JsonNode waiting = onA.ok(
                "rlm_execute",
                Map.of("code", "xs = list(range(12))\nn = rlm_query('how many?', context=xs)\nprint('n', n)"));
        assertThat(waiting.path("status").asText()).as(waiting.toString()).isEqualTo("suspended");
        String id = waiting.path("session_id").asText();
        JsonNode call = waiting.path("pending").path(0);
        String child = call.path("child_session_id").asText();

        JsonNode refused = throughB.call("rlm_list_vars", Map.of("session_id", id));
        assertThat(McpDriver.json(refused).path("error").path("code").asText())
                .as("a call through B meets the step waiting on A")
                .isEqualTo("STEP_SUSPENDED");
        JsonNode pending = onB.ok("rlm_pending", Map.of("session_id", id));
        assertThat(pending.path("pending").path(0).path("id").asText())
                .isEqualTo(call.path("id").asText());
        assertThat(onB.run(child, "k = len(context)\nprint(k)"))
                .as("the child session, made on A, worked in through B")
                .isEqualTo("12\n");
        JsonNode done = onB.ok(
                "rlm_answer",
                Map.of(
                        "session_id",
                        id,
                        "answers",
                        List.of(Map.of("id", call.path("id").asText(), "var", "k"))));
        assertThat(done.path("stdout").asText()).as(done.toString()).isEqualTo("n 12\n");
        assertThat(listed(onB, id).path("owner_node").asText())
                .as("the step ran on its owner, A")
                .startsWith("n-");
    }
}

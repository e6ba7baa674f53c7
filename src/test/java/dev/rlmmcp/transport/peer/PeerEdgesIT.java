package dev.rlmmcp.transport.peer;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.cluster.Router;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Routing at its edges: a body too large to hold streams to its owner (409s included); a failing router; an
 * owner that never answers, given up once the cluster names another.
 */
class PeerEdgesIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void aLargeBodyIsStreamedToTheOwnerEvenAfterA409() throws Exception {
        Map<String, String> recorded = new ConcurrentHashMap<>();
        try (PeerNode a = new PeerNode("node-a", dir.resolve("a"), recorded);
                PeerNode b = new PeerNode("node-b", dir.resolve("b"), recorded)) {
            HttpClient http =
                    HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            String pad = "x".repeat(300_000);
            a.routes.put("big", id -> b.remote());
            assertThat(whoami(http, a, "big", pad)).isEqualTo("node-b");

            AtomicInteger asked = new AtomicInteger();
            a.routes.put("back", id -> asked.getAndIncrement() == 0 ? b.remote() : new Router.Local());
            b.routes.put("back", id -> a.remote());
            assertThat(whoami(http, a, "back", pad)).isEqualTo("node-a");
        }
    }

    private static String whoami(HttpClient http, PeerNode node, String session, String pad) throws Exception {
        HttpResponse<String> response = call(http, node, session, pad);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        JsonNode answer = JSON.readTree(response.body());
        return answer.path("result").path("content").get(0).path("text").asText();
    }

    private static HttpResponse<String> call(HttpClient http, PeerNode node, String session, String pad)
            throws Exception {
        String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"whoami\","
                + "\"arguments\":{\"session_id\":\"" + session + "\",\"pad\":\"" + pad + "\"},\"_meta\":{"
                + "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                + "\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
        return http.send(
                HttpRequest.newBuilder(URI.create(node.url() + "/mcp"))
                        .header("Content-Type", "application/json")
                        .header("Accept", "application/json, text/event-stream")
                        .header("MCP-Protocol-Version", "2026-07-28")
                        .header("Mcp-Method", "tools/call")
                        .header("Mcp-Name", "whoami")
                        .header("Mcp-Param-Session-Id", session)
                        .timeout(Duration.ofSeconds(30))
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aRouterThatFailsIsA503SayingToRetry() throws Exception {
        try (PeerNode a = new PeerNode("node-a", dir.resolve("a"), new ConcurrentHashMap<>())) {
            a.routes.put("db-down", id -> {
                throw new IllegalStateException("the cluster database is unreachable");
            });
            HttpClient http =
                    HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            HttpResponse<String> refused = http.send(
                    HttpRequest.newBuilder(URI.create(a.url() + "/rpc"))
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(
                                    "{\"method\":\"whoami\",\"params\":{\"session_id\":\"db-down\"}}"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(refused.statusCode()).isEqualTo(503);
            assertThat(refused.body()).contains("retry in a few seconds").doesNotContain("IllegalStateException");
        }
    }

    @Test
    void aCallForASessionBeingHandedOverWaitsUntilItMovesInsteadOfFailing() throws Exception {
        Map<String, String> recorded = new ConcurrentHashMap<>();
        try (PeerNode a = new PeerNode("node-a", dir.resolve("a"), recorded);
                PeerNode b = new PeerNode("node-b", dir.resolve("b"), recorded)) {
            b.serving = false; // b got SIGTERM: it finishes its calls and hands its sessions over
            AtomicInteger asked = new AtomicInteger();
            a.routes.put("handed", id -> asked.getAndIncrement() < 4 ? b.remote() : new Router.Local());
            HttpClient http =
                    HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            assertThat(whoami(http, a, "handed", "")).isEqualTo("node-a");
            assertThat(asked.get()).isGreaterThanOrEqualTo(5);
        }
    }

    @Test
    void anOwnerThatTakesTheRequestAndNeverAnswersIsAnsweredMayHaveRunAndTheRequestIsNeverSentElsewhere()
            throws Exception {
        try (PeerNode a = new PeerNode("node-a", dir.resolve("a"), new ConcurrentHashMap<>());
                ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread.ofVirtual().start(() -> swallow(silent)); // a peer cut off after the connection was made
            Router.Remote cutOff = new Router.Remote("node-c", "127.0.0.1:" + silent.getLocalPort());
            long leaseEnds = System.nanoTime() + Duration.ofSeconds(1).toNanos();
            a.routes.put("cut", id -> System.nanoTime() < leaseEnds ? cutOff : new Router.Local());
            HttpClient http =
                    HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            long start = System.nanoTime();
            HttpResponse<String> unknown = call(http, a, "cut", "");
            Duration waited = Duration.ofNanos(System.nanoTime() - start);
            assertThat(unknown.statusCode())
                    .as("written to the owner: it may have run there, so it is not run here")
                    .isEqualTo(502);
            assertThat(unknown.body()).contains("may have run there and is not sent again");
            assertThat(waited)
                    .isLessThan(Duration.ofSeconds(1).plus(Reroute.PATIENCE).plusSeconds(3));
            assertThat(whoami(http, a, "cut", ""))
                    .as("the next request goes to the new owner")
                    .isEqualTo("node-a");
        }
    }

    /** Accepts connections and reads what comes, answering nothing. */
    private static void swallow(ServerSocket server) {
        try {
            while (true) {
                Socket socket = server.accept();
                Thread.ofVirtual().start(() -> {
                    try (InputStream in = socket.getInputStream()) {
                        in.transferTo(OutputStream.nullOutputStream());
                    } catch (IOException e) {
                        // the proxy gave up on this connection
                    }
                });
            }
        } catch (IOException e) {
            // the test is over
        }
    }
}

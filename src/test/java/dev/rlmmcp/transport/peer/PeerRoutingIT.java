package dev.rlmmcp.transport.peer;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.cluster.PeerAuth;
import dev.rlmmcp.cluster.Router;
import dev.rlmmcp.transport.http.ApiKey;
import dev.rlmmcp.transport.http.HttpSettings;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two real nodes on loopback ports, each with its peer connector, and routers the test steers: a client's
 * request for a session the other node owns is served there, through the first node, streams included.
 */
class PeerRoutingIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CALL = "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":%s}";

    @TempDir
    Path dir;

    private final HttpClient http =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private PeerNode a;
    private PeerNode b;

    @BeforeEach
    void start() throws Exception {
        Map<String, String> recorded = new ConcurrentHashMap<>();
        a = new PeerNode("node-a", dir.resolve("a"), recorded);
        b = new PeerNode("node-b", dir.resolve("b"), recorded);
    }

    @AfterEach
    void stop() {
        a.close();
        b.close();
    }

    private HttpRequest.Builder post(String url, String body) {
        return HttpRequest.newBuilder(URI.create(url + "/mcp"))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(body));
    }

    private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String text(JsonNode answer) {
        return answer.path("result").path("content").get(0).path("text").asText();
    }

    /** A 2026-07-28 tools/call, with session_id in the body and in Mcp-Param-Session-Id. */
    private HttpRequest.Builder stateless(String url, String tool, String session, String extra) {
        String params = "{\"name\":\"" + tool + "\",\"arguments\":{\"session_id\":\"" + session + "\"}" + extra
                + ",\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                + "\"io.modelcontextprotocol/clientCapabilities\":{\"sampling\":{}}}}";
        return post(url, CALL.formatted(1, params))
                .header("MCP-Protocol-Version", "2026-07-28")
                .header("Mcp-Method", "tools/call")
                .header("Mcp-Name", tool)
                .header("Mcp-Param-Session-Id", session);
    }

    @Test
    void aCallForASessionOfTheOtherNodeIsServedThereByHeaderOrByBody() throws Exception {
        b.routes.put("s-b", id -> new Router.Local());
        a.routes.put("s-b", id -> b.remote());

        HttpResponse<String> byHeader = send(stateless(a.url(), "whoami", "s-b", ""));
        assertThat(byHeader.statusCode()).as(byHeader.body()).isEqualTo(200);
        assertThat(text(JSON.readTree(byHeader.body()))).isEqualTo("node-b");

        String direct = CALL.formatted(2, "{\"name\":\"whoami\",\"arguments\":{\"session_id\":\"s-b\"}}");
        assertThat(text(JSON.readTree(send(post(a.url(), direct)).body()))).isEqualTo("node-b");
        String own = CALL.formatted(3, "{\"name\":\"whoami\",\"arguments\":{\"session_id\":\"s-a\"}}");
        assertThat(text(JSON.readTree(send(post(a.url(), own)).body()))).isEqualTo("node-a");
    }

    @Test
    void progressStreamsThroughTheProxyEventByEvent() throws Exception {
        a.routes.put("s-b", id -> b.remote());
        String params =
                "{\"name\":\"slow\",\"arguments\":{\"session_id\":\"s-b\"},\"_meta\":{\"progressToken\":\"p\"}}";
        long start = System.nanoTime();
        HttpResponse<InputStream> response =
                http.send(post(a.url(), CALL.formatted(4, params)).build(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(response.headers().firstValue("Content-Type").orElse("")).startsWith("text/event-stream");
        List<Long> progressAt = new ArrayList<>();
        String last = null;
        try (BufferedReader lines =
                new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                if (line.startsWith("data: ")) {
                    last = line.substring(6);
                    if (last.contains("notifications/progress")) {
                        progressAt.add((System.nanoTime() - start) / 1_000_000);
                    }
                }
            }
        }
        long doneAt = (System.nanoTime() - start) / 1_000_000;
        assertThat(progressAt).hasSize(3);
        // the first event came as it was sent, not with the answer at the end (1.2 s of work)
        assertThat(progressAt.getFirst()).isLessThan(doneAt - 600);
        assertThat(text(JSON.readTree(last))).isEqualTo("node-b done");
    }

    @Test
    void aSamplingRoundOfAnMcpSessionAtHomeOnTheOtherNodePassesThroughTheProxy() throws Exception {
        HttpResponse<String> init = send(
                post(
                        b.url(),
                        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                                + "\"2025-06-18\",\"capabilities\":{\"sampling\":{}},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}"));
        String session = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
        a.mcpRoutes.put(session, b.remote());
        send(post(a.url(), "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}")
                .header("Mcp-Session-Id", session));

        HttpResponse<InputStream> call = http.send(
                post(a.url(), CALL.formatted(5, "{\"name\":\"ask\",\"arguments\":{}}"))
                        .header("Mcp-Session-Id", session)
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        String answer = null;
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(call.body(), StandardCharsets.UTF_8))) {
            for (String line = lines.readLine(); line != null && answer == null; line = lines.readLine()) {
                if (!line.startsWith("data: ")) {
                    continue;
                }
                JsonNode message = JSON.readTree(line.substring(6));
                if ("sampling/createMessage".equals(message.path("method").asText())) {
                    ObjectNode reply = JSON.createObjectNode().put("jsonrpc", "2.0");
                    reply.set("id", message.get("id"));
                    reply.set(
                            "result",
                            JSON.readTree(
                                    "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"Paris\"},\"model\":\"m\"}"));
                    HttpResponse<String> accepted =
                            send(post(a.url(), JSON.writeValueAsString(reply)).header("Mcp-Session-Id", session));
                    assertThat(accepted.statusCode()).as(accepted.body()).isEqualTo(202);
                } else if (message.has("result")) {
                    answer = text(message);
                }
            }
        }
        assertThat(answer).isEqualTo("node-b heard: Paris");
    }

    @Test
    void anInputRequiredRoundOfTheStatelessRevisionIsRetriedThroughTheProxy() throws Exception {
        a.routes.put("s-b", id -> b.remote());
        JsonNode round =
                JSON.readTree(send(stateless(a.url(), "ask", "s-b", "")).body());
        assertThat(round.path("result").path("resultType").asText())
                .as(round.toString())
                .isEqualTo("input_required");
        String key = round.path("result").path("inputRequests").fieldNames().next();
        String retry = ",\"inputResponses\":{\"" + key + "\":{\"role\":\"assistant\",\"content\":{\"type\":\"text\","
                + "\"text\":\"Paris\"},\"model\":\"m\"}},\"requestState\":\""
                + round.path("result").path("requestState").asText() + "\"";
        JsonNode done =
                JSON.readTree(send(stateless(a.url(), "ask", "s-b", retry)).body());
        assertThat(text(done)).as(done.toString()).isEqualTo("node-b heard: Paris");
    }

    @Test
    void aStaleRouteIsFollowedByTheOwnersAnswer409AndTooManyMovesEndIn503() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        // a believes b owns it; b says a does; a, asked by b's answer, now holds it
        a.routes.put("moved", id -> asked.getAndIncrement() == 0 ? b.remote() : new Router.Local());
        b.routes.put("moved", id -> a.remote());
        assertThat(text(JSON.readTree(
                        send(stateless(a.url(), "whoami", "moved", "")).body())))
                .isEqualTo("node-a");

        a.routes.put("loop", id -> b.remote());
        b.routes.put("loop", id -> a.remote());
        HttpResponse<String> loop = send(stateless(a.url(), "whoami", "loop", ""));
        assertThat(loop.statusCode()).isEqualTo(503);
        assertThat(loop.body()).contains("moved between nodes 3 times");
    }

    @Test
    void anUnreachableOwnerIsA503SayingToRetryUnlessItsSessionIsTakenOverHere() throws Exception {
        int closed;
        try (ServerSocket socket = new ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        Router.Remote dead = new Router.Remote("node-dead", "127.0.0.1:" + closed);
        a.routes.put("gone", id -> dead);
        long start = System.nanoTime();
        HttpResponse<String> refused = send(stateless(a.url(), "whoami", "gone", ""));
        assertThat(refused.statusCode()).isEqualTo(503);
        // it waited for the owner's lease to run out (the database still named the dead node after 10 s)
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Reroute.PATIENCE);
        assertThat(JSON.readTree(refused.body()).path("error").path("message").asText())
                .contains("node-dead", "unreachable", "retry in a few seconds");

        AtomicInteger asked = new AtomicInteger();
        a.routes.put("expired", id -> asked.getAndIncrement() < 5 ? dead : new Router.Local());
        assertThat(text(JSON.readTree(
                        send(stateless(a.url(), "whoami", "expired", "")).body())))
                .isEqualTo("node-a");
    }

    @Test
    void thePeerPortServesOnlySignedRequestsAndThePublicPortNeverTakesOneAsAPeers() throws Exception {
        String peerUrl = "http://" + b.peerAddress();
        HttpResponse<String> unsigned = send(stateless(peerUrl, "whoami", "x", ""));
        assertThat(unsigned.statusCode()).isEqualTo(401);
        String forged = new PeerAuth("not the cluster's shared secret", "node-a").sign("POST", "/mcp");
        assertThat(send(stateless(peerUrl, "whoami", "x", "").header(PeerAuth.HEADER, forged))
                        .statusCode())
                .isEqualTo(401);
        String signed = new PeerAuth(PeerNode.SECRET, "node-a").sign("POST", "/mcp");
        HttpResponse<String> good = send(stateless(peerUrl, "whoami", "x", "").header(PeerAuth.HEADER, signed));
        assertThat(text(JSON.readTree(good.body()))).isEqualTo("node-b");

        // on the public port a peer's header is nothing: the request is routed as a client's, not answered 409
        a.routes.put("s-b", id -> b.remote());
        HttpResponse<String> asClient = send(stateless(a.url(), "whoami", "s-b", "")
                .header(PeerAuth.HEADER, new PeerAuth(PeerNode.SECRET, "x").sign("POST", "/mcp")));
        assertThat(text(JSON.readTree(asClient.body()))).isEqualTo("node-b");
    }

    @Test
    void aNodeThatIsNotServingSendsClientsAway() throws Exception {
        a.serving = false;
        HttpResponse<String> refused = send(stateless(a.url(), "whoami", "s-a", ""));
        assertThat(refused.statusCode()).isEqualTo(503);
        assertThat(refused.headers().firstValue("Retry-After")).contains("2");
    }

    @Test
    void anMcpSessionWhoseHomeIsGoneIsAdoptedUnderItsOwnId() throws Exception {
        HttpResponse<String> init = send(post(
                b.url(),
                "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                        + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}"));
        String session = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
        assertThat(b.recorded).containsKey(session);
        b.close();

        String whoami = CALL.formatted(6, "{\"name\":\"whoami\",\"arguments\":{}}");
        HttpResponse<String> adopted = send(post(a.url(), whoami).header("Mcp-Session-Id", session));
        assertThat(adopted.statusCode()).as(adopted.body()).isEqualTo(200);
        assertThat(text(JSON.readTree(adopted.body()))).isEqualTo("node-a");
        assertThat(send(post(a.url(), whoami).header("Mcp-Session-Id", "never-started"))
                        .statusCode())
                .isEqualTo(404);

        HttpResponse<String> deleted = send(HttpRequest.newBuilder(URI.create(a.url() + "/mcp"))
                .header("Mcp-Session-Id", session)
                .DELETE());
        assertThat(deleted.statusCode()).isEqualTo(200);
        assertThat(a.recorded).doesNotContainKey(session);
    }

    @Test
    void aCallWhoseRouteTheClusterDatabaseCannotGiveAtToolLevelIsServedHereNotFailed() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        // the routing filter finds the session here; by the tool-level check the database no longer answers
        a.routes.put("s-db", id -> {
            if (asked.getAndIncrement() == 0) {
                return new Router.Local();
            }
            throw new RlmException(ErrorCode.UPSTREAM_ERROR, "the cluster database did not answer", null, "retry");
        });
        HttpResponse<String> reply = send(stateless(a.url(), "whoami", "s-db", ""));
        assertThat(reply.statusCode()).as(reply.body()).isEqualTo(200);
        assertThat(text(JSON.readTree(reply.body()))).isEqualTo("node-a");
        assertThat(asked.get()).as("asked by the filter and at tool level").isEqualTo(2);
    }

    @Test
    void atTheHomeOfAnMcpSessionACallForAnotherNodesSessionIsForwardedToolLevel() throws Exception {
        a.routes.put("s-b", id -> b.remote());
        HttpResponse<String> init = send(
                post(
                        a.url(),
                        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                                + "\"2025-06-18\",\"capabilities\":{\"sampling\":{}},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}"));
        String session = init.headers().firstValue("Mcp-Session-Id").orElseThrow();

        List<String> slow = events(
                session,
                CALL.formatted(
                        7,
                        "{\"name\":\"slow\",\"arguments\":{\"session_id\":\"s-b\"},\"_meta\":"
                                + "{\"progressToken\":\"tok\"}}"));
        assertThat(slow.stream().filter(m -> m.contains("notifications/progress") && m.contains("\"tok\"")))
                .hasSize(3);
        assertThat(text(JSON.readTree(slow.getLast()))).isEqualTo("node-b done");
        assertThat(JSON.readTree(slow.getLast()).path("result").has("resultType"))
                .isFalse();
        assertThat(slow.getLast()).doesNotContain("io.modelcontextprotocol/");

        List<String> asked =
                events(session, CALL.formatted(8, "{\"name\":\"ask\",\"arguments\":{\"session_id\":\"s-b\"}}"));
        assertThat(asked.stream().filter(m -> m.contains("sampling/createMessage")))
                .hasSize(1);
        assertThat(text(JSON.readTree(asked.getLast()))).isEqualTo("node-b heard: Paris");
    }

    /** The messages of a call's event stream on node a, each sampling request answered "Paris". */
    private List<String> events(String session, String call) throws Exception {
        HttpResponse<InputStream> response = http.send(
                post(a.url(), call).header("Mcp-Session-Id", session).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        List<String> messages = new ArrayList<>();
        try (BufferedReader lines =
                new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                if (!line.startsWith("data: ")) {
                    continue;
                }
                messages.add(line.substring(6));
                JsonNode message = JSON.readTree(line.substring(6));
                if ("sampling/createMessage".equals(message.path("method").asText())) {
                    ObjectNode reply = JSON.createObjectNode().put("jsonrpc", "2.0");
                    reply.set("id", message.get("id"));
                    reply.set(
                            "result",
                            JSON.readTree(
                                    "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"Paris\"},\"model\":\"m\"}"));
                    send(post(a.url(), JSON.writeValueAsString(reply)).header("Mcp-Session-Id", session));
                }
            }
        }
        return messages;
    }

    @Test
    void aLegacySseMessageIsSentToTheNodeOfItsStream() throws Exception {
        HttpResponse<InputStream> stream = http.send(
                HttpRequest.newBuilder(URI.create(b.url() + "/sse"))
                        .header("Accept", "text/event-stream")
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(stream.body(), StandardCharsets.UTF_8))) {
            String endpoint = null;
            for (String line = lines.readLine(); endpoint == null; line = lines.readLine()) {
                if (line.startsWith("data:")) {
                    endpoint = line.substring(5).strip();
                }
            }
            String id = endpoint.substring(endpoint.indexOf("session_id=") + "session_id=".length());
            assertThat(b.recorded).containsKey(id);
            a.mcpRoutes.put(id, b.remote());
            HttpResponse<String> posted = send(
                    HttpRequest.newBuilder(URI.create(a.url() + endpoint))
                            .header("Content-Type", "application/json")
                            .POST(
                                    HttpRequest.BodyPublishers.ofString(
                                            "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                                                    + "\"2024-11-05\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}")));
            assertThat(posted.statusCode()).as(posted.body()).isEqualTo(202);
            String answer = null;
            for (String line = lines.readLine(); answer == null && line != null; line = lines.readLine()) {
                if (line.startsWith("data:") && line.contains("\"id\":9")) {
                    answer = line;
                }
            }
            assertThat(answer).contains("serverInfo");
        }
    }

    @Test
    void peersPassNeitherTheApiKeyNorTheOriginCheckWhichClientsStillMeet() throws Exception {
        HttpSettings local = HttpSettings.local(0, 1 << 20);
        HttpSettings keyed = new HttpSettings(
                local.host(),
                0,
                local.maxRequestBytes(),
                ApiKey.of("the clients' api key"),
                Set.of(),
                Set.of(),
                local.sessionIdle(),
                local.sseKeepAlive(),
                null,
                local.stopTimeout());
        try (PeerNode c = new PeerNode("node-c", dir.resolve("c"), new ConcurrentHashMap<>(), keyed)) {
            assertThat(send(stateless(c.url(), "whoami", "x", "")).statusCode()).isEqualTo(401);
            assertThat(send(stateless(c.url(), "whoami", "x", "")
                                    .header("Authorization", "Bearer the clients' api key")
                                    .header("Origin", "http://evil.example"))
                            .statusCode())
                    .isEqualTo(403);
            HttpResponse<String> keyedClient =
                    send(stateless(c.url(), "whoami", "x", "").header("Authorization", "Bearer the clients' api key"));
            assertThat(text(JSON.readTree(keyedClient.body()))).isEqualTo("node-c");

            String signed = new PeerAuth(PeerNode.SECRET, "node-a").sign("POST", "/mcp");
            HttpResponse<String> peer = send(stateless("http://" + c.peerAddress(), "whoami", "x", "")
                    .header(PeerAuth.HEADER, signed)
                    .header("Origin", "http://evil.example"));
            assertThat(peer.statusCode()).as(peer.body()).isEqualTo(200);
            assertThat(text(JSON.readTree(peer.body()))).isEqualTo("node-c");

            // a keyed node's clients reach another node's sessions through it without that key going along
            c.routes.put("s-b", id -> b.remote());
            HttpResponse<String> forwarded = send(
                    stateless(c.url(), "whoami", "s-b", "").header("Authorization", "Bearer the clients' api key"));
            assertThat(text(JSON.readTree(forwarded.body()))).isEqualTo("node-b");
        }
    }

    @Test
    void aTaskOfTheOtherNodeIsFollowedThroughAnyNodeByItsId() throws Exception {
        a.routes.put("s-b", id -> b.remote());
        String meta = ",\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                + "\"io.modelcontextprotocol/clientCapabilities\":{\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}}}";
        JsonNode created = JSON.readTree(send(post(
                                a.url(),
                                CALL.formatted(
                                        10, "{\"name\":\"slow\",\"arguments\":{\"session_id\":\"s-b\"}" + meta + "}"))
                        .header("MCP-Protocol-Version", "2026-07-28")
                        .header("Mcp-Method", "tools/call")
                        .header("Mcp-Name", "slow")
                        .header("Mcp-Param-Session-Id", "s-b"))
                .body());
        assertThat(created.path("result").path("resultType").asText())
                .as(created.toString())
                .isEqualTo("task");
        String task = created.path("result").path("taskId").asText();
        assertThat(task).startsWith("node-b~" + b.peerAddress() + "~");

        JsonNode got = null;
        for (int i = 0;
                i < 100 && (got == null || "working".equals(got.path("status").asText()));
                i++) {
            Thread.sleep(100);
            HttpResponse<String> polled = send(post(
                            a.url(),
                            "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tasks/get\",\"params\":{\"taskId\":\"" + task
                                    + "\"" + meta + "}}")
                    .header("MCP-Protocol-Version", "2026-07-28")
                    .header("Mcp-Method", "tasks/get")
                    .header("Mcp-Name", task));
            assertThat(polled.statusCode()).as(polled.body()).isEqualTo(200);
            got = JSON.readTree(polled.body()).path("result");
        }
        assertThat(got.path("status").asText()).as(got.toString()).isEqualTo("completed");
        assertThat(got.path("result").path("content").toString()).contains("node-b done");
    }

    @Test
    void aRetryOfASessionlessRoundIsRoutedByItsRequestStateToTheNodeThatAsked() throws Exception {
        String meta = ",\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                + "\"io.modelcontextprotocol/clientCapabilities\":{\"sampling\":{}}}";
        String ask = "{\"name\":\"ask\",\"arguments\":{}%s" + meta + "}";
        JsonNode round =
                JSON.readTree(send(statelessHeaders(post(b.url(), CALL.formatted(12, ask.formatted(""))), "ask"))
                        .body());
        String state = round.path("result").path("requestState").asText();
        assertThat(state).as(round.toString()).startsWith("node-b~");
        String key = round.path("result").path("inputRequests").fieldNames().next();
        String retry = ",\"inputResponses\":{\"" + key + "\":{\"role\":\"assistant\",\"content\":{\"type\":\"text\","
                + "\"text\":\"Paris\"},\"model\":\"m\"}},\"requestState\":\"" + state + "\"";
        JsonNode done =
                JSON.readTree(send(statelessHeaders(post(a.url(), CALL.formatted(13, ask.formatted(retry))), "ask"))
                        .body());
        assertThat(text(done)).as(done.toString()).isEqualTo("node-b heard: Paris");
    }

    private static HttpRequest.Builder statelessHeaders(HttpRequest.Builder request, String tool) {
        return request.header("MCP-Protocol-Version", "2026-07-28")
                .header("Mcp-Method", "tools/call")
                .header("Mcp-Name", tool);
    }
}

package dev.rlmmcp.e2e;

import static dev.rlmmcp.e2e.support.RawClient.isAnswerTo;
import static dev.rlmmcp.e2e.support.RawClient.notificationJson;
import static dev.rlmmcp.e2e.support.RawClient.requestJson;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.RawClient;
import dev.rlmmcp.e2e.support.RunningServer;
import dev.rlmmcp.e2e.support.ServerProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What every transport owes a client, checked the same way on stdio, Streamable HTTP ({@code /mcp}) and
 * legacy SSE ({@code /sse}) by a raw JSON-RPC client over real pipes and sockets: a request the client
 * cancelled gets no answer, malformed JSON a parse error, an oversize message its error, a call with a
 * progressToken progress notifications, a notification no reply; and the same call gives the same text.
 * After each refusal the connection still serves a call.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class TransportContractIT {

    /** One MB, the smallest limit, so that an oversize message stays cheap to send. */
    private static final List<String> FLAGS = List.of("--max-request-mb", "1", "--interrupt-grace-ms", "500");

    private static final Duration ANSWER = Duration.ofMinutes(2);
    /** How long an answer that must not come is waited for, after a later request's answer. */
    private static final Duration SILENCE = Duration.ofSeconds(3);

    private static final AtomicInteger IDS = new AtomicInteger();

    @RegisterExtension
    static final RunningServer server = RunningServer.http(FLAGS.toArray(String[]::new));

    private static final Map<String, RawClient> clients = new LinkedHashMap<>();

    @BeforeAll
    static void connect() throws Exception {
        List<String> stdio = new ArrayList<>(List.of("stdio"));
        stdio.addAll(FLAGS);
        clients.put("stdio", RawClient.stdio(ServerProcess.command(stdio)));
        clients.put("/mcp", RawClient.streamableHttp(server.mcpUrl()));
        clients.put("/sse", RawClient.legacySse(server.baseUrl()));
    }

    @AfterAll
    static void disconnect() {
        clients.values().forEach(RawClient::close);
    }

    private static String id() {
        return "c" + IDS.incrementAndGet();
    }

    private static String execute(String code) {
        return executeWithMeta(code, null);
    }

    private static String executeWithMeta(String code, String metaJson) {
        return "{\"name\":\"rlm_execute\",\"arguments\":{\"code\":" + RawClient.quote(code) + "}"
                + (metaJson == null ? "" : ",\"_meta\":" + metaJson) + "}";
    }

    private static String text(JsonNode answer) {
        assertThat(answer.has("result")).as("%s", answer).isTrue();
        return answer.path("result").path("content").path(0).path("text").asText();
    }

    /** The client still serves a call: one that prints {@code word}. */
    private static void stillServes(RawClient client, String word) throws Exception {
        JsonNode answer = client.request(id(), "tools/call", execute("print('" + word + "')"));
        assertThat(text(answer)).as("%s after the refusal", client).startsWith(word + "\n");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"stdio", "/mcp", "/sse"})
    void aCancelledRequestGetsNoAnswer(String transport) throws Exception {
        RawClient client = clients.get(transport);
        int mark = client.mark();
        String cancelled = id();
        client.send(requestJson(
                cancelled,
                "tools/call",
                executeWithMeta("import time\ntime.sleep(60)", "{\"progressToken\":\"running-" + cancelled + "\"}")));
        // its first progress notification says the call is being served, so the cancellation finds it
        client.await(mark, m -> m.path("params").path("progressToken").asText().equals("running-" + cancelled), ANSWER);
        client.send(notificationJson(
                "notifications/cancelled", "{\"requestId\":\"" + cancelled + "\",\"reason\":\"the test gave up\"}"));

        String later = id();
        client.send(requestJson(later, "tools/call", execute("print('after the cancel')")));
        assertThat(text(client.answer(mark, later, ANSWER))).startsWith("after the cancel\n");
        Thread.sleep(SILENCE.toMillis());
        assertThat(client.received().subList(mark, client.mark()))
                .as("%s: nothing answers the cancelled request", transport)
                .noneMatch(m -> isAnswerTo(m, cancelled));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"stdio", "/mcp", "/sse"})
    void malformedJsonIsAParseError(String transport) throws Exception {
        RawClient client = clients.get(transport);
        int mark = client.mark();
        client.send("{\"jsonrpc\":\"2.0\",\"id\":\"broken\",\"method\":");
        JsonNode error = client.await(mark, m -> m.has("error"), ANSWER);
        assertThat(error.path("error").path("code").asInt()).as("%s", error).isEqualTo(-32700);
        assertThat(error.path("id").isNull())
                .as("no id can be read from it: %s", error)
                .isTrue();
        stillServes(client, "parsed");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"stdio", "/mcp", "/sse"})
    void anOversizeMessageIsRefused(String transport) throws Exception {
        RawClient client = clients.get(transport);
        int mark = client.mark();
        // half again the limit: over it, yet small enough to arrive in one read on stdio
        String data = "x".repeat(3 * 1024 * 1024 / 2);
        client.send(requestJson(
                id(),
                "tools/call",
                "{\"name\":\"rlm_load_data\",\"arguments\":{\"name\":\"big\",\"data\":\"" + data + "\"}}"));
        JsonNode error = client.await(mark, m -> m.has("error"), ANSWER);
        assertThat(error.path("error").path("code").asInt()).as("%s", error).isEqualTo(-32600);
        assertThat(error.path("error").path("message").asText()).contains("--max-request-mb");
        stillServes(client, "small again");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"stdio", "/mcp", "/sse"})
    void aCallWithAProgressTokenHearsProgress(String transport) throws Exception {
        RawClient client = clients.get(transport);
        int mark = client.mark();
        String call = id();
        String token = "progress-" + call;
        client.send(requestJson(
                call,
                "tools/call",
                executeWithMeta(
                        "import time\ntime.sleep(5)\nprint('slept')", "{\"progressToken\":\"" + token + "\"}")));
        JsonNode answer = client.answer(mark, call, ANSWER);
        assertThat(text(answer)).startsWith("slept\n");

        List<JsonNode> before =
                client.received().subList(mark, client.received().indexOf(answer));
        List<JsonNode> progress = before.stream()
                .filter(m -> m.path("method").asText().equals("notifications/progress"))
                .toList();
        assertThat(progress)
                .as("%s: progress before the answer", transport)
                .hasSizeGreaterThanOrEqualTo(2)
                .allMatch(p -> p.path("params").path("progressToken").asText().equals(token));
        assertThat(progress.getFirst().path("params").path("message").asText()).matches("running \\d+ s");
        assertThat(progress.getLast().path("params").path("progress").asDouble())
                .isGreaterThan(
                        progress.getFirst().path("params").path("progress").asDouble());
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"stdio", "/mcp", "/sse"})
    void notificationsGetNoReply(String transport) throws Exception {
        RawClient client = clients.get(transport);
        int mark = client.mark();
        client.send(notificationJson("notifications/initialized", null));
        client.send(notificationJson("notifications/no_such_thing", "{\"x\":1}"));
        // nothing is asked of a client that declared no roots capability
        client.send(notificationJson("notifications/roots/list_changed", null));
        client.send(notificationJson("notifications/cancelled", "{\"requestId\":\"never-sent\"}"));
        String ping = id();
        client.send(requestJson(ping, "ping", null));
        client.answer(mark, ping, ANSWER);
        Thread.sleep(SILENCE.toMillis());
        assertThat(client.received().subList(mark, client.mark()))
                .as("%s: only the ping is answered, and nothing asked", transport)
                .hasSize(1)
                .allMatch(m -> isAnswerTo(m, ping));
    }

    @Test
    void theSameCallGivesTheSameTextOnEveryTransport() throws Exception {
        Map<String, List<String>> texts = new LinkedHashMap<>();
        for (Map.Entry<String, RawClient> client : clients.entrySet()) {
            List<String> replies = new ArrayList<>();
            for (String code : List.of("x = 6*7; print(x)", "print(x)", "x + 1")) {
                replies.add(text(client.getValue().request(id(), "tools/call", execute(code))));
            }
            texts.put(client.getKey(), replies);
        }
        // each connection has its own REPL session, whose name a reply may mention
        texts.replaceAll((transport, replies) -> replies.stream()
                .map(t -> t.replaceAll("session s-\\w+", "session s-…"))
                .toList());
        assertThat(texts.get("stdio").getFirst()).startsWith("42\n");
        assertThat(texts.get("/mcp")).as("/mcp against stdio").isEqualTo(texts.get("stdio"));
        assertThat(texts.get("/sse")).as("/sse against stdio").isEqualTo(texts.get("stdio"));
    }
}

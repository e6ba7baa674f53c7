package dev.rlmmcp.transport.stdio;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.ResponseFormat;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;
import dev.rlmmcp.tools.ToolCatalog;
import dev.rlmmcp.transport.McpServers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The whole stdio transport in process. The context a transport creates for a request reaches the tool
 * through the SDK's dispatch (no thread local), and the client's notifications/cancelled reaches it. Calls
 * wait for the start-up checks, which wait until the client has its tools, as a stdio start wires them.
 */
class StdioEndpointTest {

    private final ObjectMapper json = new ObjectMapper();
    private final BlockingQueue<byte[]> toServer = new LinkedBlockingQueue<>();
    private final BlockingQueue<String> fromServer = new LinkedBlockingQueue<>();
    private final BlockingQueue<CallContext> contexts = new LinkedBlockingQueue<>();
    private final CountDownLatch waiting = new CountDownLatch(1);
    private StdioEndpoint endpoint;

    @BeforeEach
    void start() throws Exception {
        ToolCatalog catalog = new ToolCatalog(List.of(new Probe()), json);
        // the checks that calls wait for begin once the client has its tools (StdioCommand's order)
        CompletableFuture<Void> checked = new CompletableFuture<>();
        endpoint = new StdioEndpoint(
                new McpServers(catalog, json),
                new QueuedStreams.Feed(toServer),
                new QueuedStreams.Lines(fromServer),
                1 << 20,
                checked);
        endpoint.listed().thenRun(() -> checked.complete(null));
        send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                + "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
        answer(1);
        send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    }

    @AfterEach
    void stop() throws Exception {
        toServer.add(new byte[0]);
        endpoint.awaitClientGone();
        endpoint.close();
    }

    @Test
    void theToolsAnsweredAreWhatBeginsTheStartsBackgroundWorkNotInitialize() throws Exception {
        assertThat(endpoint.listed()).as("after initialize").isNotDone();
        send("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
        assertThat(answer(2).path("result").path("tools")).hasSize(1);
        assertThat(endpoint.listed()).succeedsWithin(Duration.ofSeconds(5));
    }

    @Test
    void aCallBeforeTheToolsAreListedBeginsItItselfAndIsAnswered() throws Exception {
        assertThat(endpoint.listed()).isNotDone();
        send(call(2, false));
        assertThat(answer(2).path("result").path("isError").asBoolean()).isFalse();
        assertThat(endpoint.listed()).isDone();
    }

    @Test
    void eachCallGetsALiveContextOfItsOwnFromTheFace() throws Exception {
        send(call(2, false));
        assertThat(answer(2).path("result").path("isError").asBoolean()).isFalse();
        send(call(3, false));
        answer(3);
        CallContext first = contexts.poll(5, TimeUnit.SECONDS);
        CallContext second = contexts.poll(5, TimeUnit.SECONDS);
        assertThat(first).isNotNull().isNotSameAs(CallContext.NONE).isNotSameAs(second);
        assertThat(second).isNotNull().isNotSameAs(CallContext.NONE);
        assertThat(first.cancelled()).isFalse();
    }

    @Test
    void theClientsCancellationReachesTheToolAndItsAnswerIsNotSent() throws Exception {
        send(call(7, true));
        assertThat(waiting.await(10, TimeUnit.SECONDS)).as("the tool started").isTrue();
        send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":7.0}}");
        CallContext context = contexts.poll(10, TimeUnit.SECONDS);
        assertThat(context).isNotNull();
        assertThat(context.cancelled()).isTrue();
        send(call(8, false));
        List<JsonNode> before = new ArrayList<>();
        JsonNode eight = answer(8, before);
        assertThat(eight.path("result").path("isError").asBoolean()).isFalse();
        assertThat(before)
                .as("no answer to the cancelled call 7")
                .noneMatch(m -> m.path("id").asInt(-1) == 7);
    }

    private String call(int id, boolean wait) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"probe\","
                + "\"arguments\":{\"wait\":" + wait + "}}}";
    }

    private void send(String line) {
        toServer.add((line + "\n").getBytes(StandardCharsets.UTF_8));
    }

    private JsonNode answer(int id) throws Exception {
        return answer(id, new ArrayList<>());
    }

    /** The answer with this id; what came before it goes to {@code before}. */
    private JsonNode answer(int id, List<JsonNode> before) throws Exception {
        while (true) {
            String line = fromServer.poll(10, TimeUnit.SECONDS);
            assertThat(line).as("an answer to %d", id).isNotNull();
            JsonNode message = json.readTree(line);
            if (message.path("id").asInt(-1) == id && !message.has("method")) {
                return message;
            }
            before.add(message);
        }
    }

    /** Records its caller's context; with wait, waits until that context is cancelled. */
    private final class Probe implements RlmTool {

        @Override
        public String name() {
            return "probe";
        }

        @Override
        public String description() {
            return "test probe";
        }

        @Override
        public Schema schema() {
            return Schema.object().bool("wait", "wait for the cancellation");
        }

        @Override
        public ResponseFormat defaultFormat() {
            return ResponseFormat.JSON;
        }

        @Override
        public ObjectNode call(Args args, Caller caller) {
            CallContext context = caller.context();
            if (args.flag("wait")) {
                CountDownLatch cancelled = new CountDownLatch(1);
                try (CallContext.Registration registration = context.onCancel(cancelled::countDown)) {
                    waiting.countDown();
                    cancelled.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            contexts.add(context);
            return json.createObjectNode().put("cancelled", context.cancelled());
        }
    }
}

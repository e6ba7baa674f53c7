package dev.rlmmcp.transport.stdio;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.ResponseFormat;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;
import dev.rlmmcp.tools.ToolCatalog;
import dev.rlmmcp.transport.McpServers;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A configuration's first start: no answers kept, so the front holds initialize and the lists until the start
 * has made their answers from its tools ({@link StdioFront#offer}), answers them then, byte for byte as the SDK
 * server built afterwards answers, and leaves every other request, and every answer it could not make, to it.
 */
class StdioFrontTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static final List<String> FIRST = List.of("""
            {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}""", """
            {"jsonrpc":"2.0","method":"notifications/initialized"}""", """
            {"jsonrpc":"2.0","id":"two","method":"tools/list"}""", """
            {"jsonrpc":"2.0","id":3,"method":"prompts/list"}""", """
            {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}""");

    @Test
    void aFirstStartsFrontAnswersInitializeAndTheListsOnceMadeAndTheServerTheRestOnce() throws Exception {
        McpServers servers = servers(List.of(new Echo()), McpServers.Features.NONE);
        Map<String, String> own = ownAnswers(servers, FIRST);
        try (Piped client = new Piped()) {
            StdioFront front = StdioFront.start(client.serverIn, client.serverOut, StartupAnswers.none());
            client.send(FIRST);
            assertThat(client.answers.poll(300, TimeUnit.MILLISECONDS))
                    .as("nothing is answered before the answers are made")
                    .isNull();

            front.offer(servers);
            Map<String, String> early = client.take(3);
            assertThat(early).containsOnlyKeys("1", "two", "3");
            assertThat(early)
                    .as("the SDK server's own bytes")
                    .isEqualTo(Map.of("1", own.get("1"), "two", own.get("two"), "3", own.get("3")));

            StdioEndpoint endpoint = behind(front, servers);
            Map<String, String> call = client.take(1);
            assertThat(call).containsOnlyKeys("4");
            assertThat(call.get("4"))
                    .as("the call behind the early answer ran once the server had taken the client's capabilities")
                    .contains("\\\"sampling\\\":true");
            finish(client, endpoint);
            assertThat(client.rest()).as("nothing answered twice").isEmpty();
        }
    }

    /** {@link #FIRST} from a client that does not sample. */
    private static final List<String> NOT_SAMPLING = FIRST.stream()
            .map(line -> line.replace("\"capabilities\":{\"sampling\":{}}", "\"capabilities\":{}"))
            .toList();

    @Test
    void aClientThatDoesNotSampleIsListedOnlyTheToolsItCanUseByTheFrontAsByTheServer() throws Exception {
        McpServers servers = servers(List.of(new Echo(), new NeedsSampling()), McpServers.Features.NONE);
        Map<String, String> own = ownAnswers(servers, NOT_SAMPLING);
        assertThat(tools(own.get("two"))).containsExactly("echo");
        assertThat(tools(ownAnswers(servers, FIRST).get("two"))).containsExactly("echo", "solve");
        try (Piped client = new Piped()) {
            StdioFront front = StdioFront.start(client.serverIn, client.serverOut, StartupAnswers.none());
            client.send(NOT_SAMPLING);
            front.offer(servers);
            Map<String, String> early = client.take(3);
            assertThat(early.get("two")).isEqualTo(own.get("two"));
            StdioEndpoint endpoint = behind(front, servers);
            assertThat(client.take(1)).containsOnlyKeys("4");
            finish(client, endpoint);
            assertThat(client.rest()).as("nothing answered twice").isEmpty();
        }
    }

    private static List<String> tools(String answer) throws Exception {
        List<String> names = new ArrayList<>();
        JSON.readTree(answer)
                .path("result")
                .path("tools")
                .forEach(t -> names.add(t.path("name").asText()));
        return names;
    }

    @Test
    void anAnswerTheFrontCannotMakeIsTheServers() throws Exception {
        McpServers servers = servers(
                List.of(new Echo()),
                new McpServers.Features(
                        List.of(annotated()), List.of(), List.of(), List.of(), List.of(), false, Map.of()));
        try (Piped client = new Piped()) {
            StdioFront front = StdioFront.start(client.serverIn, client.serverOut, StartupAnswers.none());
            client.send(FIRST);
            front.offer(servers);
            assertThat(client.take(2))
                    .as("a tool with annotations is not written by the front")
                    .containsOnlyKeys("1", "3");
            StdioEndpoint endpoint = behind(front, servers);
            Map<String, String> late = client.take(2);
            assertThat(late).containsOnlyKeys("two", "4");
            assertThat(JSON.readTree(late.get("two")).path("result").path("tools"))
                    .hasSize(2);
            finish(client, endpoint);
            assertThat(client.rest()).isEmpty();
        }
    }

    @Test
    void aListBeforeInitializeIsLeftToTheServerWhichRefusesIt() throws Exception {
        McpServers servers = servers(List.of(new Echo()), McpServers.Features.NONE);
        try (Piped client = new Piped()) {
            StdioFront front = StdioFront.start(client.serverIn, client.serverOut, StartupAnswers.none());
            client.send(List.of("""
                    {"jsonrpc":"2.0","id":9,"method":"tools/list"}"""));
            client.send(FIRST);
            front.offer(servers);
            assertThat(client.take(3)).containsOnlyKeys("1", "two", "3");
            StdioEndpoint endpoint = behind(front, servers);
            Map<String, String> late = client.take(2);
            assertThat(late).containsOnlyKeys("9", "4");
            assertThat(JSON.readTree(late.get("9"))
                            .path("error")
                            .path("message")
                            .asText())
                    .contains("initialize");
            finish(client, endpoint);
        }
    }

    /** The server built once the answers are made, reading what the front read first. */
    private static StdioEndpoint behind(StdioFront front, McpServers servers) {
        return new StdioEndpoint(
                servers,
                front.input(),
                front.output(),
                1 << 20,
                CompletableFuture.completedFuture(null),
                front.answers());
    }

    /** Closes the client's stdin and waits for the server to see it. */
    private static void finish(Piped client, StdioEndpoint endpoint) throws InterruptedException {
        client.close();
        endpoint.awaitClientGone();
        endpoint.close();
    }

    /** What a server with no front answers to {@code lines} ({@link #FIRST}), by id (its call's answer depends on no timing). */
    private static Map<String, String> ownAnswers(McpServers servers, List<String> lines) throws Exception {
        try (Piped client = new Piped()) {
            StdioEndpoint endpoint = new StdioEndpoint(
                    servers, client.serverIn, client.serverOut, 1 << 20, CompletableFuture.completedFuture(null));
            client.send(lines);
            Map<String, String> answers = client.take(4);
            finish(client, endpoint);
            return answers;
        }
    }

    private static McpServers servers(List<RlmTool> tools, McpServers.Features extra) {
        return new McpServers(new ToolCatalog(tools, JSON), JSON, extra);
    }

    private static McpServerFeatures.SyncToolSpecification annotated() {
        McpSchema.Tool tool = McpSchema.Tool.builder("annotated", Map.of("type", "object"))
                .annotations(new McpSchema.ToolAnnotations("Annotated", true, false, true, false, false))
                .build();
        return new McpServerFeatures.SyncToolSpecification(
                tool, (exchange, request) -> new McpSchema.CallToolResult(List.of(), false, null, null));
    }

    /** A client: what it sends is the server's stdin, each line the server writes an answer. */
    private static final class Piped implements AutoCloseable {

        private final BlockingQueue<byte[]> toServer = new LinkedBlockingQueue<>();
        final BlockingQueue<String> answers = new LinkedBlockingQueue<>();
        final QueuedStreams.Feed serverIn = new QueuedStreams.Feed(toServer);
        final QueuedStreams.Lines serverOut = new QueuedStreams.Lines(answers);
        private boolean closed;

        void send(List<String> lines) {
            toServer.add((String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
        }

        /** The next {@code n} answers, by their id's text. */
        Map<String, String> take(int n) throws Exception {
            Map<String, String> byId = new HashMap<>();
            for (int i = 0; i < n; i++) {
                String line = answers.poll(10, TimeUnit.SECONDS);
                assertThat(line)
                        .as("answer %d of %d; so far %s", i + 1, n, byId.keySet())
                        .isNotNull();
                byId.put(JSON.readTree(line).path("id").asText(), line);
            }
            return byId;
        }

        List<String> rest() throws InterruptedException {
            List<String> rest = new ArrayList<>();
            for (String line; (line = answers.poll(200, TimeUnit.MILLISECONDS)) != null; ) {
                rest.add(line);
            }
            return rest;
        }

        /** Closes stdin. */
        @Override
        public void close() {
            if (!closed) {
                closed = true;
                toServer.add(new byte[0]);
            }
        }
    }

    /** A tool that works only for a client that samples. */
    private static final class NeedsSampling implements RlmTool {

        @Override
        public String name() {
            return "solve";
        }

        @Override
        public String description() {
            return "Needs the client's model.";
        }

        @Override
        public Schema schema() {
            return Schema.object();
        }

        @Override
        public boolean needsSampling() {
            return true;
        }

        @Override
        public ObjectNode call(Args args, Caller caller) {
            return JSON.createObjectNode();
        }
    }

    private static final class Echo implements RlmTool {

        @Override
        public String name() {
            return "echo";
        }

        @Override
        public String description() {
            return "Echoes text. \"Quoted\", tabbed\tand unicode: é ✓.";
        }

        @Override
        public Schema schema() {
            return Schema.object().string("text", "What to echo.", true);
        }

        @Override
        public ResponseFormat defaultFormat() {
            return ResponseFormat.JSON;
        }

        @Override
        public ObjectNode call(Args args, Caller caller) {
            return JSON.createObjectNode().put("sampling", caller.sampling() != null);
        }
    }
}

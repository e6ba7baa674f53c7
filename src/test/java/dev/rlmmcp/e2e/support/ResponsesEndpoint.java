package dev.rlmmcp.e2e.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A scripted model behind the OpenAI Responses API on loopback, for the Codex CLI: every
 * {@code POST /v1/responses} is recorded and answered, streamed as server-sent events
 * ({@code response.created}, one {@code response.output_item.done}, {@code response.completed}), by the
 * next turn of the script. A turn sees the request Codex sent (its {@code input} holds the whole
 * conversation, tool outputs included), so a later turn can act on what an earlier tool call answered.
 * Anything else Codex asks for is recorded and answered 404.
 */
public final class ResponsesEndpoint implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** What the model does at one turn. */
    public sealed interface Turn permits Exec, Say {}

    /** Calls Codex's code-mode tool {@code exec} with this JavaScript. */
    public record Exec(String js) implements Turn {}

    /** Answers in text, which ends Codex's turn. */
    public record Say(String text) implements Turn {}

    /** One request as Codex sent it. */
    record Request(String method, String path, JsonNode body) {}

    private final HttpServer server;
    private final List<Request> requests = new CopyOnWriteArrayList<>();
    private final ConcurrentLinkedDeque<Function<JsonNode, Turn>> script = new ConcurrentLinkedDeque<>();
    private final List<String> failures = new CopyOnWriteArrayList<>();
    private final AtomicInteger ids = new AtomicInteger();

    private ResponsesEndpoint() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/", this::handle);
        server.start();
    }

    public static ResponsesEndpoint start() throws IOException {
        return new ResponsesEndpoint();
    }

    /** The provider's {@code base_url}: Codex posts to {@code <base_url>/responses}. */
    String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
    }

    /** Appends a turn to the script. */
    public ResponsesEndpoint then(Function<JsonNode, Turn> turn) {
        script.addLast(turn);
        return this;
    }

    public ResponsesEndpoint then(Turn turn) {
        return then(request -> turn);
    }

    List<Request> requests() {
        return List.copyOf(requests);
    }

    /** The model requests ({@code POST .../responses}), in order. */
    public List<JsonNode> turns() {
        return requests.stream()
                .filter(r -> r.path().endsWith("/responses"))
                .map(Request::body)
                .toList();
    }

    /** Turns that failed (a script step that threw, a request past the script's end), each with why. */
    public List<String> failures() {
        return List.copyOf(failures);
    }

    public int turnsLeft() {
        return script.size();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            byte[] raw = exchange.getRequestBody().readAllBytes();
            String path = exchange.getRequestURI().getPath();
            JsonNode body = parse(raw);
            requests.add(new Request(exchange.getRequestMethod(), path, body));
            if (!"POST".equals(exchange.getRequestMethod()) || !path.endsWith("/responses")) {
                send(exchange, 404, "application/json", "{\"error\":{\"message\":\"not scripted\"}}");
                return;
            }
            send(exchange, 200, "text/event-stream", sse(next(body)));
        }
    }

    private Turn next(JsonNode body) {
        Function<JsonNode, Turn> step = script.pollFirst();
        if (step == null) {
            failures.add("request " + turns().size() + " came after the script's last turn");
            return new Say("(the script has no more turns)");
        }
        try {
            return step.apply(body);
        } catch (RuntimeException | AssertionError e) {
            failures.add("turn " + turns().size() + " failed: " + e);
            return new Say("(the script failed: " + e.getMessage() + ")");
        }
    }

    private String sse(Turn turn) {
        int n = ids.incrementAndGet();
        String responseId = "resp_" + n;
        ObjectNode item = JSON.createObjectNode();
        switch (turn) {
            case Exec exec ->
                item.put("type", "custom_tool_call")
                        .put("id", "ctc_" + n)
                        .put("status", "completed")
                        .put("call_id", "call_" + n)
                        .put("name", "exec")
                        .put("input", exec.js());
            case Say say -> {
                item.put("type", "message")
                        .put("id", "msg_" + n)
                        .put("role", "assistant")
                        .put("status", "completed");
                item.putArray("content")
                        .addObject()
                        .put("type", "output_text")
                        .put("text", say.text())
                        .putArray("annotations");
            }
        }
        ObjectNode created = JSON.createObjectNode().put("type", "response.created");
        created.putObject("response").put("id", responseId);
        ObjectNode done =
                JSON.createObjectNode().put("type", "response.output_item.done").put("output_index", 0);
        done.set("item", item);
        ObjectNode completed = JSON.createObjectNode().put("type", "response.completed");
        completed
                .putObject("response")
                .put("id", responseId)
                .putObject("usage")
                .put("input_tokens", 1)
                .put("output_tokens", 1)
                .put("total_tokens", 2);
        StringBuilder out = new StringBuilder();
        for (ObjectNode event : List.of(created, done, completed)) {
            out.append("event: ")
                    .append(event.get("type").asText())
                    .append('\n')
                    .append("data: ")
                    .append(event)
                    .append("\n\n");
        }
        return out.toString();
    }

    private static void send(HttpExchange exchange, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    private static JsonNode parse(byte[] raw) {
        if (raw.length == 0) {
            return JSON.nullNode();
        }
        try {
            return JSON.readTree(raw);
        } catch (IOException e) {
            return JSON.getNodeFactory().textNode(new String(raw, StandardCharsets.UTF_8));
        }
    }

    /** Every recorded request in full, one JSON document a line, for a failure's evidence. */
    public Path dump(Path file) {
        List<String> lines = new ArrayList<>();
        for (Request r : requests) {
            ObjectNode line = JSON.createObjectNode().put("method", r.method()).put("path", r.path());
            line.set("body", r.body());
            lines.add(line.toString());
        }
        try {
            Files.createDirectories(file.getParent());
            Files.write(file, lines);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }

    /**
     * The conversation as the model saw it at its last request, without the (long, fixed) developer
     * prompts: one line per item, texts clipped.
     */
    public String transcript() {
        StringBuilder out = new StringBuilder();
        List<JsonNode> turns = turns();
        out.append(requests.size()).append(" requests, ").append(turns.size()).append(" to /responses\n");
        if (turns.isEmpty()) {
            return out.toString();
        }
        for (JsonNode item : turns.getLast().path("input")) {
            if ("developer".equals(item.path("role").asText())) {
                continue;
            }
            String text = item.toString();
            out.append("  ")
                    .append(item.path("type").asText())
                    .append(": ")
                    .append(text.length() > 1500 ? text.substring(0, 1500) + "…" : text)
                    .append('\n');
        }
        return out.toString();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}

package dev.rlmmcp.e2e.support;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.TextNode;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * A JSON-RPC client that writes each message itself and keeps every message the server sends, in the
 * order they arrive, for what an SDK client hides: malformed and oversize messages, answers that must
 * not come, notifications between a request and its answer. One subclass per transport.
 */
public abstract class RawClient implements AutoCloseable {

    static final ObjectMapper MAPPER = new ObjectMapper();

    private final List<JsonNode> received = new ArrayList<>();
    /** What the server wrote besides messages (its stderr on stdio), and what went wrong reading them. */
    private final StringBuffer diagnostics = new StringBuffer();

    /** A client of {@code rlm-mcp stdio} run with this command line, initialized. */
    public static RawClient stdio(List<String> command) throws IOException {
        return RawStdioClient.start(command);
    }

    /** A client of Streamable HTTP at {@code mcpUrl}, initialized, in the MCP session it was given. */
    public static RawClient streamableHttp(String mcpUrl) throws IOException {
        return RawHttpClient.start(mcpUrl);
    }

    /** A client of legacy HTTP+SSE: the stream of {@code baseUrl}/sse open, initialized. */
    public static RawClient legacySse(String baseUrl) throws IOException {
        return RawSseClient.start(baseUrl);
    }

    /**
     * Sends one message exactly as given (it need not be JSON) and returns once it is sent; whatever the
     * server answers arrives in {@link #received()}.
     */
    public abstract void send(String message) throws IOException;

    /** Ends the connection (and a stdio server with it). */
    @Override
    public abstract void close();

    /** Every message received so far, in order; one that was not JSON is a text node. */
    public synchronized List<JsonNode> received() {
        return List.copyOf(received);
    }

    /** How many messages have been received so far: a mark to pass to {@link #await}. */
    public synchronized int mark() {
        return received.size();
    }

    /** The first message received after {@code mark} that {@code wanted} accepts; fails after {@code timeout}. */
    public synchronized JsonNode await(int mark, Predicate<JsonNode> wanted, Duration timeout)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (int i = mark; ; i++) {
            while (i >= received.size()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError("nothing wanted arrived within " + timeout + " on " + this + "; received "
                            + received.subList(mark, received.size()) + "\n" + diagnostics);
                }
                wait(Math.max(1, left / 1_000_000));
            }
            if (wanted.test(received.get(i))) {
                return received.get(i);
            }
        }
    }

    /** The answer (result or error) to the request with this id, received after {@code mark}. */
    public JsonNode answer(int mark, String id, Duration timeout) throws InterruptedException {
        return await(mark, m -> isAnswerTo(m, id), timeout);
    }

    /** Sends a request and waits for its answer. */
    public JsonNode request(String id, String method, String paramsJson) throws IOException, InterruptedException {
        int mark = mark();
        send(requestJson(id, method, paramsJson));
        return answer(mark, id, Duration.ofMinutes(2));
    }

    public static boolean isAnswerTo(JsonNode message, String id) {
        return !message.has("method")
                && message.path("id").isTextual()
                && message.path("id").asText().equals(id);
    }

    public static String requestJson(String id, String method, String paramsJson) {
        return "{\"jsonrpc\":\"2.0\",\"id\":\"" + id + "\",\"method\":\"" + method + "\""
                + (paramsJson == null ? "" : ",\"params\":" + paramsJson) + "}";
    }

    /** {@code text} as a JSON string literal. */
    public static String quote(String text) {
        try {
            return MAPPER.writeValueAsString(text);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(e);
        }
    }

    public static String notificationJson(String method, String paramsJson) {
        return "{\"jsonrpc\":\"2.0\",\"method\":\"" + method + "\""
                + (paramsJson == null ? "" : ",\"params\":" + paramsJson) + "}";
    }

    /** Takes in one message as the server sent it. */
    final synchronized void receive(String text) {
        JsonNode message;
        try {
            message = MAPPER.readTree(text);
        } catch (JsonProcessingException e) {
            message = TextNode.valueOf(text);
        }
        received.add(message);
        notifyAll();
    }

    final void note(String line) {
        diagnostics.append(line).append('\n');
    }

    /** Sends initialize and notifications/initialized; fails unless initialize is answered with a result. */
    final void initialize() throws IOException {
        JsonNode answer;
        try {
            answer = request(
                    "init",
                    "initialize",
                    "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                            + "\"clientInfo\":{\"name\":\"raw-client\",\"version\":\"1\"}}");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
        if (!answer.has("result")) {
            throw new IllegalStateException("initialize refused: " + answer);
        }
        send(notificationJson("notifications/initialized", null));
    }
}

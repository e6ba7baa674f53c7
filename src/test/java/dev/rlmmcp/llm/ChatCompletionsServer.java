package dev.rlmmcp.llm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A small OpenAI-compatible chat completions server on a real loopback socket: it records every
 * request (headers and body) and the most requests it had in flight at once, and answers each
 * with what {@link #behaviour} says (by default "answer: " + the prompt upper-cased, with usage).
 */
public final class ChatCompletionsServer implements AutoCloseable {

    public record Seen(Headers headers, JsonNode body, String path) {}

    public record Reply(int status, String body, long delayMs) {}

    @FunctionalInterface
    public interface Behaviour {
        Reply answer(JsonNode request) throws Exception;
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpServer server;
    private final List<Seen> seen = new CopyOnWriteArrayList<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger peak = new AtomicInteger();
    public volatile Behaviour behaviour = ChatCompletionsServer::upperCase;

    public ChatCompletionsServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/", exchange -> {
            int now = inFlight.incrementAndGet();
            peak.accumulateAndGet(now, Math::max);
            try (exchange) {
                JsonNode body = JSON.readTree(exchange.getRequestBody().readAllBytes());
                seen.add(new Seen(
                        exchange.getRequestHeaders(),
                        body,
                        exchange.getRequestURI().getPath()));
                Reply reply = behaviour.answer(body);
                if (reply.delayMs() > 0) {
                    Thread.sleep(reply.delayMs());
                }
                byte[] bytes = reply.body().getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().set("Content-Type", "application/json");
                exchange.sendResponseHeaders(reply.status(), bytes.length);
                exchange.getResponseBody().write(bytes);
            } catch (Exception e) {
                exchange.sendResponseHeaders(599, -1);
            } finally {
                inFlight.decrementAndGet();
            }
        });
        server.start();
    }

    /** The base URL clients are given, ending in /v1. */
    public URI baseUrl() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/v1");
    }

    public List<Seen> seen() {
        return seen;
    }

    public int peakInFlight() {
        return peak.get();
    }

    public static String userPrompt(JsonNode request) {
        JsonNode messages = request.path("messages");
        return messages.path(messages.size() - 1).path("content").asText();
    }

    public static Reply upperCase(JsonNode request) {
        return completion(
                "answer: " + userPrompt(request).toUpperCase(),
                userPrompt(request).length(),
                3,
                0);
    }

    public static Reply completion(String text, long promptTokens, long completionTokens, long delayMs) {
        ObjectNode reply = JSON.createObjectNode()
                .put("id", "cmpl-1")
                .put("object", "chat.completion")
                .put("model", "test-model");
        reply.putArray("choices")
                .addObject()
                .put("index", 0)
                .put("finish_reason", "stop")
                .putObject("message")
                .put("role", "assistant")
                .put("content", text);
        reply.putObject("usage")
                .put("prompt_tokens", promptTokens)
                .put("completion_tokens", completionTokens)
                .put("total_tokens", promptTokens + completionTokens);
        return new Reply(200, reply.toString(), delayMs);
    }

    @Override
    public void close() {
        server.stop(0);
    }
}

package dev.rlmmcp.e2e.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A scripted model on loopback for the agent CLIs that call tools through a model API: the Gemini API
 * ({@code POST /v1beta/models/M:streamGenerateContent?alt=sse}, {@code :generateContent}, {@code :countTokens};
 * Gemini CLI with {@code GOOGLE_GEMINI_BASE_URL}) and OpenAI-compatible chat completions
 * ({@code POST /v1/chat/completions}, streamed or not, and {@code GET /v1/models}; opencode, Qwen Code).
 *
 * <p>A request that offers the rlm tools (by the client's own names: {@code mcp_rlm_rlm_execute},
 * {@code rlm_rlm_execute}, or deferred behind Qwen Code's {@code tool_search}/{@code tool_call}) is the
 * agent's turn and is answered by the next turn of the script; any other request (a router, a title, a
 * memory or next-speaker check) gets a neutral answer and leaves the script alone. A call is sent with every
 * argument the client added to the tool's schema beyond rlm-mcp's own ({@code ownArguments}), filled in, as
 * a model told to use them would.
 */
public final class ToolCallingModel implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** What the model does at one turn. */
    public sealed interface Turn permits Call, Say {}

    /** Calls an rlm-mcp tool (by rlm-mcp's name) with these arguments. */
    public record Call(String tool, Map<String, Object> args) implements Turn {}

    /** Answers in text, which ends the agent's turn. */
    public record Say(String text) implements Turn {}

    /** A tool call as sent: the client's tool name and every argument. */
    public record Sent(String name, JsonNode args) {}

    private final HttpServer server;
    private final Map<String, Set<String>> ownArguments;
    private final ConcurrentLinkedDeque<Function<String, Turn>> script = new ConcurrentLinkedDeque<>();
    private final List<String> failures = new CopyOnWriteArrayList<>();
    private final List<Sent> sent = new CopyOnWriteArrayList<>();
    private final List<String> paths = new CopyOnWriteArrayList<>();
    private final AtomicInteger ids = new AtomicInteger();
    private final Set<String> words = ConcurrentHashMap.newKeySet();

    private ToolCallingModel(Map<String, Set<String>> ownArguments) throws IOException {
        this.ownArguments = ownArguments;
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/", this::handle);
        server.start();
    }

    /** A model that knows rlm-mcp's own arguments of each tool (tools/list), to tell those a client adds. */
    public static ToolCallingModel start(Map<String, Set<String>> ownArguments) throws IOException {
        return new ToolCallingModel(ownArguments);
    }

    /** {@code http://127.0.0.1:PORT}: Gemini CLI's base URL; chat clients take {@link #chatBaseUrl()}. */
    public String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    public String chatBaseUrl() {
        return baseUrl() + "/v1";
    }

    /** Appends a turn made from the conversation so far (the request's JSON as text). */
    public ToolCallingModel then(Function<String, Turn> turn) {
        script.addLast(turn);
        return this;
    }

    public ToolCallingModel then(Turn turn) {
        return then(conversation -> turn);
    }

    /** Whether any request the client sent named {@code tool} (rlm_solve, rlm_execute): offered, or seen. */
    public boolean mentioned(String tool) {
        return words.contains(tool);
    }

    public List<Sent> sent() {
        return List.copyOf(sent);
    }

    public List<String> failures() {
        return List.copyOf(failures);
    }

    public int turnsLeft() {
        return script.size();
    }

    /** The paths requested, in order (for a failure's message). */
    public List<String> paths() {
        return List.copyOf(paths);
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().toString();
            paths.add(exchange.getRequestMethod() + " " + path);
            byte[] raw = exchange.getRequestBody().readAllBytes();
            JsonNode body = raw.length == 0 ? JSON.createObjectNode() : JSON.readTree(raw);
            String text = body.toString();
            for (String word : List.of("rlm_solve", "rlm_execute")) {
                if (text.contains(word)) {
                    words.add(word);
                }
            }
            if (path.endsWith("/models") && "GET".equals(exchange.getRequestMethod())) {
                send(
                        exchange,
                        "application/json",
                        "{\"object\":\"list\",\"data\":[{\"id\":\"scripted\",\"object\":\"model\"}]}");
            } else if (path.contains(":countTokens")) {
                send(exchange, "application/json", "{\"totalTokens\":1}");
            } else if (path.contains("/v1beta/models/")) {
                ObjectNode chunk = gemini(body);
                if (path.contains(":streamGenerateContent")) {
                    send(exchange, "text/event-stream", "data: " + chunk + "\r\n\r\n");
                } else {
                    send(exchange, "application/json", chunk.toString());
                }
            } else if (path.endsWith("/chat/completions")) {
                chat(exchange, body);
            } else {
                failures.add("not scripted: " + exchange.getRequestMethod() + " " + path);
                exchange.sendResponseHeaders(404, -1);
            }
        } catch (RuntimeException e) {
            failures.add("failed: " + e);
            exchange.sendResponseHeaders(500, -1);
        }
    }

    // ---- Gemini API

    private ObjectNode gemini(JsonNode body) {
        Map<String, JsonNode> tools = new LinkedHashMap<>();
        body.path("tools")
                .forEach(t -> t.path("functionDeclarations").forEach(f -> {
                    JsonNode schema =
                            f.has("parametersJsonSchema") ? f.path("parametersJsonSchema") : f.path("parameters");
                    tools.put(f.path("name").asText(), schema);
                }));
        ObjectNode content = JSON.createObjectNode().put("role", "model");
        ArrayNode parts = content.putArray("parts");
        Turn turn = tools.keySet().stream().anyMatch(n -> n.contains("rlm_execute")) ? next(body.toString()) : null;
        if (turn instanceof Call call) {
            String name = clientName(tools.keySet(), call.tool());
            ObjectNode args = withAdded(call, tools.get(name));
            sent.add(new Sent(name, args));
            ObjectNode functionCall =
                    parts.addObject().putObject("functionCall").put("name", name);
            functionCall.set("args", args);
        } else {
            parts.addObject().put("text", turn instanceof Say say ? say.text() : neutral(body.toString()));
        }
        ObjectNode chunk = JSON.createObjectNode();
        ObjectNode candidate = chunk.putArray("candidates").addObject();
        candidate.set("content", content);
        candidate.put("finishReason", "STOP").put("index", 0);
        chunk.putObject("usageMetadata")
                .put("promptTokenCount", 10)
                .put("candidatesTokenCount", 5)
                .put("totalTokenCount", 15);
        chunk.put("modelVersion", "scripted");
        return chunk;
    }

    /** What Gemini CLI's own helpers ask for in JSON (its router, its next-speaker check), else a word. */
    private static String neutral(String request) {
        if (request.contains("complexity_score")) {
            return "{\"complexity_reasoning\": \"a single tool call\", \"complexity_score\": 10}";
        }
        if (request.contains("next_speaker")) {
            return "{\"reasoning\": \"the answer is given\", \"next_speaker\": \"user\"}";
        }
        return "ok";
    }

    // ---- chat completions

    private void chat(HttpExchange exchange, JsonNode body) throws IOException {
        Map<String, JsonNode> tools = new LinkedHashMap<>();
        body.path("tools")
                .forEach(t -> tools.put(
                        t.path("function").path("name").asText(),
                        t.path("function").path("parameters")));
        boolean direct = tools.keySet().stream().anyMatch(n -> n.contains("rlm_execute"));
        boolean deferred =
                !direct && tools.containsKey("tool_call") && body.toString().contains("mcp__rlm__");
        ObjectNode message = JSON.createObjectNode().put("role", "assistant");
        String finish = "stop";
        boolean searched = false;
        for (JsonNode m : body.path("messages")) {
            searched |= "tool".equals(m.path("role").asText()) && m.toString().contains("<functions>");
        }
        if (deferred && !searched) {
            // Qwen Code: a deferred tool's schema is reviewed with tool_search before tool_call runs it
            finish = toolCall(message, "tool_search", JSON.createObjectNode().put("query", "+rlm rlm"));
        } else if (direct || deferred) {
            Turn turn = next(body.toString());
            if (turn instanceof Call call && direct) {
                String name = clientName(tools.keySet(), call.tool());
                ObjectNode args = withAdded(call, tools.get(name));
                sent.add(new Sent(name, args));
                finish = toolCall(message, name, args);
            } else if (turn instanceof Call call) {
                ObjectNode wrapped = JSON.createObjectNode().put("name", "mcp__rlm__" + call.tool());
                wrapped.set("arguments", JSON.valueToTree(call.args()));
                sent.add(new Sent("mcp__rlm__" + call.tool(), wrapped.path("arguments")));
                finish = toolCall(message, "tool_call", wrapped);
            } else {
                message.put("content", ((Say) turn).text());
            }
        } else {
            message.put("content", "ok");
        }
        String model = body.path("model").asText("scripted");
        if (body.path("stream").asBoolean()) {
            ObjectNode first = chunk(model, message, null);
            ObjectNode last = chunk(model, JSON.createObjectNode(), finish);
            usage(last);
            send(exchange, "text/event-stream", "data: " + first + "\n\ndata: " + last + "\n\ndata: [DONE]\n\n");
        } else {
            ObjectNode reply = JSON.createObjectNode()
                    .put("id", "chatcmpl-" + ids.incrementAndGet())
                    .put("object", "chat.completion")
                    .put("created", System.currentTimeMillis() / 1000)
                    .put("model", model);
            ObjectNode choice = reply.putArray("choices").addObject().put("index", 0);
            choice.set("message", message);
            choice.put("finish_reason", finish);
            usage(reply);
            send(exchange, "application/json", reply.toString());
        }
    }

    /** The token counts a chat completion reports, the same for every answer. */
    private static void usage(ObjectNode answer) {
        answer.putObject("usage")
                .put("prompt_tokens", 10)
                .put("completion_tokens", 5)
                .put("total_tokens", 15);
    }

    private String toolCall(ObjectNode message, String name, JsonNode args) {
        ObjectNode call = message.putArray("tool_calls")
                .addObject()
                .put("index", 0)
                .put("id", "call_" + ids.incrementAndGet())
                .put("type", "function");
        call.putObject("function").put("name", name).put("arguments", args.toString());
        return "tool_calls";
    }

    private ObjectNode chunk(String model, ObjectNode delta, String finish) {
        ObjectNode chunk = JSON.createObjectNode()
                .put("id", "chatcmpl-" + ids.get())
                .put("object", "chat.completion.chunk")
                .put("created", System.currentTimeMillis() / 1000)
                .put("model", model);
        ObjectNode choice = chunk.putArray("choices").addObject().put("index", 0);
        choice.set("delta", delta);
        if (finish == null) {
            choice.putNull("finish_reason");
        } else {
            choice.put("finish_reason", finish);
        }
        return chunk;
    }

    // ---- shared

    private Turn next(String conversation) {
        Function<String, Turn> step = script.pollFirst();
        if (step == null) {
            failures.add("an agent turn came after the script's last turn");
            return new Say("(the script has no more turns)");
        }
        try {
            return step.apply(conversation);
        } catch (RuntimeException | AssertionError e) {
            failures.add("a script turn failed: " + e.getMessage());
            return new Say("(the script failed: " + e.getMessage() + ")");
        }
    }

    /** The client's name for an rlm-mcp tool: the offered name that ends with it. */
    private String clientName(Set<String> offered, String tool) {
        return offered.stream()
                .filter(n -> n.endsWith(tool))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException(tool + " is not among the tools offered: " + offered));
    }

    /** The call's arguments, and a value for each property the client added to the tool's schema. */
    private ObjectNode withAdded(Call call, JsonNode schema) {
        ObjectNode args = JSON.valueToTree(call.args());
        Set<String> own = ownArguments.getOrDefault(call.tool(), Set.of());
        List<String> added = new ArrayList<>();
        schema.path("properties").fieldNames().forEachRemaining(name -> {
            if (!own.contains(name) && !args.has(name)) {
                added.add(name);
            }
        });
        for (String name : added) {
            JsonNode property = schema.path("properties").path(name);
            switch (property.path("type").asText().toLowerCase(Locale.ROOT)) {
                case "boolean" -> args.put(name, true);
                case "integer", "number" -> args.put(name, 1);
                default -> args.put(name, "scripted");
            }
        }
        return args;
    }

    private static void send(HttpExchange exchange, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(200, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}

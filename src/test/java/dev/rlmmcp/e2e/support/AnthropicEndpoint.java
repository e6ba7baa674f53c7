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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A scripted model behind the Anthropic Messages API on a loopback port, for driving the real Claude Code
 * without an LLM. It records every request and answers {@code POST /v1/messages} the way the API does:
 * with {@code stream: true} as server-sent events ({@code message_start}, {@code content_block_start},
 * {@code content_block_delta} with {@code text_delta} or {@code input_json_delta}, {@code content_block_stop},
 * {@code message_delta}, {@code message_stop}), otherwise as one JSON message; {@code count_tokens} gets an
 * estimate.
 *
 * <p>A request is a <em>main turn</em> when it offers the model Claude Code's {@code ToolSearch} tool (the
 * agent's own loop) and comes from the main agent; anything else (a title, a summary, a quota probe) is a
 * side request and gets a short text. Main turns follow the current {@link #script}: which step comes next is
 * read from the conversation itself, from the id of the last tool call, which encodes the run and the step
 * that made it ({@code toolu_<run>_<step>_<n>}). So a resumed conversation, whose history holds an earlier
 * run's calls, starts the new run's script at its first step.
 *
 * <p>A <em>sub-agent turn</em> is one of a sub-agent Claude Code started with its {@code Agent} tool
 * ({@code {"description", "prompt", "subagent_type", "run_in_background"}}): Claude Code 2.1.332 sends it
 * with the header {@code x-claude-code-agent-id} (the agent's id, also in the hand-back the parent gets) and
 * {@code cc_is_subagent=true} in the billing line of its system prompt; its conversation starts from the
 * {@code prompt} the parent gave, and it offers {@code ToolSearch} too. Sub-agent turns follow the
 * {@link #subagentScript}, each sub-agent through its own conversation (so several may run it at once); their
 * tool call ids carry the request's index as well ({@code toolu_<run>_<step>_<n>_<index>}), unique across
 * sub-agents.
 */
public final class AnthropicEndpoint implements AutoCloseable {

    public static final ObjectMapper JSON = new ObjectMapper();

    /** One request as it arrived. */
    public record Request(
            int index,
            String method,
            String path,
            Map<String, List<String>> headers,
            JsonNode body,
            boolean main,
            String run,
            String agent) {

        /** A turn of a sub-agent's own loop ({@link #agent} is its id). */
        public boolean subagent() {
            return agent != null;
        }

        /** The text of the first user message: for a sub-agent, the prompt its parent gave it. */
        public String firstUserText() {
            for (JsonNode message : body.path("messages")) {
                if (!"user".equals(message.path("role").asText())) {
                    continue;
                }
                JsonNode content = message.path("content");
                if (content.isTextual()) {
                    return content.asText();
                }
                StringBuilder text = new StringBuilder();
                for (JsonNode block : content) {
                    if ("text".equals(block.path("type").asText())) {
                        text.append(block.path("text").asText()).append('\n');
                    }
                }
                return text.toString();
            }
            return "";
        }

        /** Every block of every message, in order. */
        public List<JsonNode> blocks() {
            List<JsonNode> all = new ArrayList<>();
            for (JsonNode message : body.path("messages")) {
                JsonNode content = message.path("content");
                if (content.isArray()) {
                    content.forEach(all::add);
                } else if (content.isTextual()) {
                    all.add(JSON.createObjectNode()
                            .put("type", "text")
                            .put("text", content.asText())
                            .put("role", message.path("role").asText()));
                }
            }
            return all;
        }

        /** The whole request as the model reads it (messages, system, tools), as one string. */
        public String text() {
            return body.toString();
        }

        /** The name of the tool a {@code tool_use} block with this id called, or null. */
        String toolName(String toolUseId) {
            for (JsonNode block : blocks()) {
                if ("tool_use".equals(block.path("type").asText())
                        && toolUseId.equals(block.path("id").asText())) {
                    return block.path("name").asText();
                }
            }
            return null;
        }

        /** The {@code tool_result} blocks, in order. */
        public List<JsonNode> toolResults() {
            return blocks().stream()
                    .filter(b -> "tool_result".equals(b.path("type").asText()))
                    .toList();
        }

        /** The result of the last tool call, as text (see {@link #resultText}). */
        String lastResult() {
            List<JsonNode> results = toolResults();
            return results.isEmpty() ? "" : resultText(results.getLast());
        }
    }

    /** What a {@code tool_result} block puts in front of the model: its string, or its text blocks joined. */
    public static String resultText(JsonNode toolResult) {
        JsonNode content = toolResult.path("content");
        if (content.isTextual()) {
            return content.asText();
        }
        StringBuilder text = new StringBuilder();
        for (JsonNode block : content) {
            text.append(block.has("text") ? block.path("text").asText() : block.toString());
        }
        return text.toString();
    }

    /** One block of an answer: text, or a call of a tool with an input object (the endpoint gives it its id). */
    public record Block(String text, String tool, JsonNode input, String id) {
        public static Block say(String text) {
            return new Block(text, null, null, null);
        }

        public static Block call(String tool, Map<String, ?> input) {
            return new Block(null, tool, JSON.valueToTree(input), null);
        }
    }

    /** One step of a script: what the model answers to the request in front of it. */
    @FunctionalInterface
    public interface Step {
        List<Block> answer(Request request);
    }

    private final HttpServer server;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final List<Request> requests = new CopyOnWriteArrayList<>();
    private final AtomicInteger ids = new AtomicInteger();
    private volatile String run = "none";
    private volatile List<Step> steps = List.of();
    private volatile String subagentRun = "none";
    private volatile List<Step> subagentSteps = List.of();
    private final List<Throwable> failures = new CopyOnWriteArrayList<>();

    public AnthropicEndpoint() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", this::handle);
        server.setExecutor(executor);
        server.start();
    }

    /** The value for {@code ANTHROPIC_BASE_URL}. */
    public String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** The script main turns follow from now on, under a run name that tells its tool calls apart. */
    public void script(String runName, List<Step> script) {
        if (!runName.matches("[a-z0-9]+")) {
            throw new IllegalArgumentException("run names are lower-case letters and digits: " + runName);
        }
        this.steps = List.copyOf(script);
        this.run = runName;
    }

    /** The script every sub-agent's turns follow from now on, under a run name of its own. */
    public void subagentScript(String runName, List<Step> script) {
        if (!runName.matches("[a-z0-9]+")) {
            throw new IllegalArgumentException("run names are lower-case letters and digits: " + runName);
        }
        this.subagentSteps = List.copyOf(script);
        this.subagentRun = runName;
    }

    public List<Request> requests() {
        return List.copyOf(requests);
    }

    /** The main turns of one run, in order. */
    public List<Request> mainTurns(String runName) {
        return requests.stream()
                .filter(r -> r.main() && runName.equals(r.run()))
                .toList();
    }

    /** The turns of the sub-agents that followed one sub-agent run's script, in order, by agent id. */
    public Map<String, List<Request>> subagentTurns(String runName) {
        Map<String, List<Request>> byAgent = new LinkedHashMap<>();
        for (Request r : requests) {
            if (r.subagent() && runName.equals(r.run())) {
                byAgent.computeIfAbsent(r.agent(), a -> new ArrayList<>()).add(r);
            }
        }
        return byAgent;
    }

    /** What went wrong inside the endpoint (a step that threw, a request it could not read). */
    public List<Throwable> failures() {
        return List.copyOf(failures);
    }

    /** Every recorded request, one JSON object a line, for a test's failure report. */
    public void dump(Path file) throws IOException {
        Files.createDirectories(file.getParent());
        StringBuilder out = new StringBuilder();
        for (Request r : requests) {
            ObjectNode line = JSON.createObjectNode()
                    .put("index", r.index())
                    .put("method", r.method())
                    .put("path", r.path())
                    .put("main", r.main())
                    .put("run", r.run())
                    .put("agent", r.agent());
            line.set("body", r.body());
            out.append(line).append('\n');
        }
        Files.writeString(file, out);
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            byte[] raw = exchange.getRequestBody().readAllBytes();
            String path = exchange.getRequestURI().toString();
            JsonNode body;
            try {
                body = raw.length == 0 ? JSON.createObjectNode() : JSON.readTree(raw);
            } catch (IOException e) {
                body = JSON.createObjectNode().put("unparsed", new String(raw, StandardCharsets.UTF_8));
            }
            String agent = exchange.getRequestHeaders().getFirst("x-claude-code-agent-id");
            boolean loop = offersToolSearch(body);
            boolean main = loop && agent == null;
            boolean subagent = loop && agent != null;
            String runName = main ? run : subagent ? subagentRun : null;
            Request request = new Request(
                    ids.getAndIncrement(),
                    exchange.getRequestMethod(),
                    path,
                    Map.copyOf(exchange.getRequestHeaders()),
                    body,
                    main,
                    runName,
                    subagent ? agent : null);
            requests.add(request);
            String route = exchange.getRequestURI().getPath();
            if (!"POST".equals(exchange.getRequestMethod()) || !route.startsWith("/v1/messages")) {
                send(exchange, 404, "application/json", error("not_found_error", "no route " + route));
            } else if (route.equals("/v1/messages/count_tokens")) {
                send(
                        exchange,
                        200,
                        "application/json",
                        JSON.createObjectNode()
                                .put("input_tokens", raw.length / 4)
                                .toString());
            } else if (route.equals("/v1/messages")) {
                answer(
                        exchange,
                        request,
                        loop ? turn(request, runName) : List.of(Block.say("Log analysis")),
                        raw.length);
            } else {
                send(exchange, 404, "application/json", error("not_found_error", "no route " + route));
            }
        } catch (Throwable e) {
            failures.add(e);
            throw e;
        }
    }

    private static boolean offersToolSearch(JsonNode body) {
        for (JsonNode tool : body.path("tools")) {
            if ("ToolSearch".equals(tool.path("name").asText())) {
                return true;
            }
        }
        return false;
    }

    /** The current script's answer to a main turn; a step that throws ends the turn with its message. */
    private List<Block> turn(Request request, String runName) {
        int step = nextStep(request.body(), runName);
        List<Step> script = request.subagent() ? subagentSteps : steps;
        String suffix = request.subagent() ? "_" + request.index() : "";
        if (step >= script.size()) {
            return List.of(Block.say("(the script of run " + runName + " has no step " + step + ")"));
        }
        try {
            List<Block> blocks = new ArrayList<>();
            for (Block b : script.get(step).answer(request)) {
                blocks.add(
                        b.tool() == null
                                ? b
                                : new Block(
                                        null,
                                        b.tool(),
                                        b.input(),
                                        "toolu_" + runName + "_" + step + "_" + blocks.size() + suffix));
            }
            return blocks;
        } catch (RuntimeException | AssertionError e) {
            failures.add(new AssertionError("step " + step + " of run " + runName + " failed: " + e.getMessage(), e));
            return List.of(Block.say("scripted model failed at step " + step + ": " + e.getMessage()));
        }
    }

    /** One past the step of this run that made the last assistant message's tool calls; 0 when none did. */
    private static int nextStep(JsonNode body, String runName) {
        JsonNode messages = body.path("messages");
        for (int i = messages.size() - 1; i >= 0; i--) {
            JsonNode message = messages.get(i);
            if (!"assistant".equals(message.path("role").asText())) {
                continue;
            }
            for (JsonNode block : message.path("content")) {
                String id = block.path("id").asText("");
                String prefix = "toolu_" + runName + "_";
                if ("tool_use".equals(block.path("type").asText()) && id.startsWith(prefix)) {
                    return Integer.parseInt(id.substring(prefix.length()).split("_")[0]) + 1;
                }
            }
            return 0;
        }
        return 0;
    }

    private void answer(HttpExchange exchange, Request request, List<Block> blocks, int requestBytes)
            throws IOException {
        String model = request.body().path("model").asText("claude-scripted");
        String id = "msg_" + request.index();
        boolean toolUse = blocks.stream().anyMatch(b -> b.tool() != null);
        String stopReason = toolUse ? "tool_use" : "end_turn";
        ObjectNode usage = JSON.createObjectNode()
                .put("input_tokens", requestBytes / 4)
                .put("output_tokens", 1)
                .put("cache_creation_input_tokens", 0)
                .put("cache_read_input_tokens", 0);
        if (!request.body().path("stream").asBoolean(false)) {
            ObjectNode message = message(id, model, usage);
            ArrayNode content = message.putArray("content");
            for (Block b : blocks) {
                content.add(b.tool() == null ? textBlock(b.text()) : toolBlock(b, b.input()));
            }
            message.put("stop_reason", stopReason);
            send(exchange, 200, "application/json", message.toString());
            return;
        }
        exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
        exchange.getResponseHeaders().set("Cache-Control", "no-cache");
        exchange.sendResponseHeaders(200, 0);
        OutputStream out = exchange.getResponseBody();
        ObjectNode start = JSON.createObjectNode().put("type", "message_start");
        ObjectNode startMessage = message(id, model, usage);
        startMessage.putArray("content");
        start.set("message", startMessage);
        event(out, "message_start", start);
        event(out, "ping", JSON.createObjectNode().put("type", "ping"));
        for (int i = 0; i < blocks.size(); i++) {
            Block b = blocks.get(i);
            ObjectNode blockStart =
                    JSON.createObjectNode().put("type", "content_block_start").put("index", i);
            if (b.tool() == null) {
                blockStart.set("content_block", textBlock(""));
                event(out, "content_block_start", blockStart);
                delta(out, i, JSON.createObjectNode().put("type", "text_delta").put("text", b.text()));
            } else {
                blockStart.set("content_block", toolBlock(b, JSON.createObjectNode()));
                event(out, "content_block_start", blockStart);
                // the input arrives in pieces, as a model streams it; only the pieces joined are JSON
                String input = b.input().toString();
                int cut = input.length() / 2;
                delta(
                        out,
                        i,
                        JSON.createObjectNode().put("type", "input_json_delta").put("partial_json", ""));
                delta(
                        out,
                        i,
                        JSON.createObjectNode()
                                .put("type", "input_json_delta")
                                .put("partial_json", input.substring(0, cut)));
                delta(
                        out,
                        i,
                        JSON.createObjectNode()
                                .put("type", "input_json_delta")
                                .put("partial_json", input.substring(cut)));
            }
            event(
                    out,
                    "content_block_stop",
                    JSON.createObjectNode().put("type", "content_block_stop").put("index", i));
        }
        ObjectNode messageDelta = JSON.createObjectNode().put("type", "message_delta");
        messageDelta.putObject("delta").put("stop_reason", stopReason).putNull("stop_sequence");
        messageDelta.putObject("usage").put("output_tokens", 10 * blocks.size());
        event(out, "message_delta", messageDelta);
        event(out, "message_stop", JSON.createObjectNode().put("type", "message_stop"));
        out.close();
    }

    private static ObjectNode message(String id, String model, ObjectNode usage) {
        ObjectNode message = JSON.createObjectNode()
                .put("id", id)
                .put("type", "message")
                .put("role", "assistant")
                .put("model", model);
        message.putNull("stop_reason");
        message.putNull("stop_sequence");
        message.set("usage", usage);
        return message;
    }

    private static ObjectNode textBlock(String text) {
        return JSON.createObjectNode().put("type", "text").put("text", text);
    }

    private static ObjectNode toolBlock(Block b, JsonNode input) {
        ObjectNode block = JSON.createObjectNode()
                .put("type", "tool_use")
                .put("id", b.id())
                .put("name", b.tool());
        block.set("input", input);
        return block;
    }

    private static void delta(OutputStream out, int index, ObjectNode delta) throws IOException {
        ObjectNode event =
                JSON.createObjectNode().put("type", "content_block_delta").put("index", index);
        event.set("delta", delta);
        event(out, "content_block_delta", event);
    }

    private static void event(OutputStream out, String name, JsonNode data) throws IOException {
        out.write(("event: " + name + "\ndata: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private static String error(String type, String message) {
        ObjectNode body = JSON.createObjectNode().put("type", "error");
        body.putObject("error").put("type", type).put("message", message);
        return body.toString();
    }

    private static void send(HttpExchange exchange, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}

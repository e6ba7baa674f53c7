package dev.rlmmcp.rlm;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;

/**
 * A trace entry's RLM runs in the JSON Lines format of alexzhang13/rlm's {@code RLMLogger}, which that
 * project's visualizer opens: a metadata line ({@code RLMMetadata.to_dict()} with "type" and
 * "timestamp"), then one line per iteration of the root RLM ({@code RLMIteration.to_dict()} with "type",
 * "iteration" from 1 and "timestamp"). A code block's sub-calls are its {@code rlm_calls}
 * ({@code RLMChatCompletion.to_dict()}, plus the {@code prompt_tokens} and {@code completion_tokens} the
 * visualizer shows); a child RLM's own run is in its call's {@code metadata} as
 * {@code {"run_metadata", "iterations"}}, as that project nests depth. Times are in seconds there.
 * <p>
 * Works on the stored form (the entry as the trace keeps it, with its {@code rlm} field), so that runs
 * read back from the store export like live ones. An rlm_solve entry exports its run; an agent's step
 * whose code called rlm_query ({@code rlm} holds its {@code calls}) exports as one iteration: the step's
 * code, its output, and those calls with the children they started.
 */
public final class TrajectoryJsonl {

    /** What the metadata line names as the environment: this server's kernels. */
    static final String ENVIRONMENT = "rlm-mcp";

    private static final ObjectMapper JSON = new ObjectMapper();

    private TrajectoryJsonl() {}

    /** Whether {@code entry} (a trace entry's JSON) holds RLM runs to export. */
    public static boolean exportable(JsonNode entry) {
        JsonNode rlm = entry.path("rlm");
        return rlm.path("root").isObject()
                || rlm.path("calls").isArray() && !rlm.path("calls").isEmpty();
    }

    /** The file's text: one JSON object per line, each line ending in a newline. */
    public static String text(JsonNode entry) {
        StringBuilder text = new StringBuilder();
        try {
            for (ObjectNode line : lines(entry)) {
                text.append(JSON.writeValueAsString(line)).append('\n');
            }
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
        return text.toString();
    }

    /** The lines: the metadata first, then the root RLM's iterations. */
    public static List<ObjectNode> lines(JsonNode entry) {
        if (!exportable(entry)) {
            throw new IllegalArgumentException(
                    "trace entry " + entry.path("index").asText("?") + " holds no RLM run");
        }
        JsonNode rlm = entry.path("rlm");
        List<ObjectNode> lines = new ArrayList<>();
        if (rlm.path("root").isObject()) {
            JsonNode root = rlm.path("root");
            Run run = new Run(rlm.path("limits"), text(rlm, "backend", "unknown"));
            String model = text(rlm, "model", text(root, "model", "unknown"));
            lines.add(line(
                            "metadata",
                            null,
                            timestamp(rlm.path("started"), 0, entry.path("at").asText("")))
                    .setAll(run.metadata(model, rlm)));
            lines.addAll(run.iterations(root));
        } else {
            // The agent's own step is the iteration; its rlm_query calls are its code's sub-calls.
            Run run = new Run(JSON.missingNode(), "unknown");
            String at = entry.path("at").asText("");
            lines.add(line("metadata", null, at).setAll(run.metadata("agent", rlm)));
            ObjectNode iteration = line("iteration", 1, at);
            iteration.putArray("prompt");
            iteration.put("response", "");
            ObjectNode result = JSON.createObjectNode();
            result.put("stdout", entry.path("output").asText(""));
            result.put(
                    "stderr",
                    "ok".equals(entry.path("status").asText("ok"))
                            ? ""
                            : entry.path("status").asText());
            ObjectNode locals = result.putObject("locals");
            entry.path("variables_changed").forEach(name -> locals.putNull(name.asText()));
            result.put("execution_time", seconds(entry.path("duration_ms")));
            result.set("rlm_calls", run.calls(rlm.path("calls")));
            result.putNull("final_answer");
            iteration
                    .putArray("code_blocks")
                    .addObject()
                    .put("code", entry.path("input").asText(""))
                    .set("result", result);
            iteration.putNull("final_answer");
            iteration.put("iteration_time", seconds(entry.path("duration_ms")));
            lines.add(iteration);
        }
        return lines;
    }

    /** What every RLM of one run shares: its limits and its backend. */
    private record Run(JsonNode limits, String backend) {

        /** {@code RLMMetadata.to_dict()}. */
        ObjectNode metadata(String model, JsonNode rlm) {
            ObjectNode m = JSON.createObjectNode();
            m.put("root_model", model);
            number(m, "max_depth", limits.path("max_depth"));
            number(m, "max_iterations", limits.path("max_iterations"));
            m.put("backend", backend);
            m.putObject("backend_kwargs").put("model_name", model);
            m.put("environment_type", ENVIRONMENT);
            ObjectNode env = m.putObject("environment_kwargs");
            for (String key : List.of("run_id", "question")) {
                if (rlm.path(key).isTextual()) {
                    env.put(key, rlm.path(key).asText());
                }
            }
            if (limits.isObject()) {
                env.set("limits", limits);
            }
            m.putNull("other_backends");
            return m;
        }

        /** The iteration lines of one RLM, numbered from 1 as RLMLogger numbers them. */
        List<ObjectNode> iterations(JsonNode node) {
            List<ObjectNode> lines = new ArrayList<>();
            JsonNode messages = node.path("messages");
            int n = 0;
            for (JsonNode it : node.path("iterations")) {
                n++;
                ObjectNode line = line(
                        "iteration",
                        n,
                        timestamp(
                                it.path("started"),
                                it.path("ms").asDouble(),
                                node.path("started").asText("")));
                ArrayNode prompt = line.putArray("prompt");
                int from = Math.max(0, it.path("prompt_from").asInt());
                int to = Math.min(messages.size(), it.path("prompt_to").asInt(messages.size()));
                for (int i = from; i < to; i++) {
                    prompt.addObject()
                            .put("role", messages.get(i).path("role").asText("user"))
                            .put("content", messages.get(i).path("content").asText(""));
                }
                line.put("response", it.path("response").asText(""));
                ArrayNode blocks = line.putArray("code_blocks");
                for (JsonNode code : it.path("code_blocks")) {
                    blocks.addObject().put("code", code.path("code").asText("")).set("result", result(code));
                }
                if (it.path("final_answer").isTextual()) {
                    line.put("final_answer", it.path("final_answer").asText());
                } else {
                    line.putNull("final_answer");
                }
                line.put("iteration_time", seconds(it.path("ms")));
                lines.add(line);
            }
            return lines;
        }

        /** {@code REPLResult.to_dict()}; the error of a failed block is its stderr, as Python shows it. */
        private ObjectNode result(JsonNode code) {
            ObjectNode r = JSON.createObjectNode();
            r.put("stdout", code.path("stdout").asText(""));
            List<String> stderr = new ArrayList<>();
            for (String key : List.of("stderr", "error")) {
                if (code.path(key).isTextual() && !code.path(key).asText().isEmpty()) {
                    stderr.add(code.path(key).asText());
                }
            }
            r.put("stderr", String.join("\n", stderr));
            // The values stay in the kernel: the names the block changed, each without a value.
            ObjectNode locals = r.putObject("locals");
            code.path("variables_changed").forEach(name -> locals.putNull(name.asText()));
            r.put("execution_time", seconds(code.path("ms")));
            r.set("rlm_calls", calls(code.path("sub_calls")));
            r.putNull("final_answer");
            return r;
        }

        /** A code block's sub-calls as {@code rlm_calls}. */
        ArrayNode calls(JsonNode subCalls) {
            ArrayNode calls = JSON.createArrayNode();
            for (JsonNode sub : subCalls) {
                JsonNode child = sub.path("child");
                calls.add(completion(
                        sub.path("prompt").asText(""),
                        sub.path("response").asText(""),
                        sub.path("error").isTextual() ? sub.path("error").asText() : null,
                        text(sub, "model", text(child, "model", "unknown")),
                        sub.path("input_tokens").asLong(),
                        sub.path("output_tokens").asLong(),
                        cost(sub),
                        sub.path("ms"),
                        sub.path("cached").asBoolean(),
                        child.isObject() ? child : null));
            }
            return calls;
        }

        /** {@code RLMChatCompletion.to_dict()}, a child RLM's run in its metadata. */
        private ObjectNode completion(
                String prompt,
                String response,
                String error,
                String model,
                long in,
                long out,
                Double cost,
                JsonNode ms,
                boolean cached,
                JsonNode child) {
            ObjectNode c = JSON.createObjectNode();
            c.put("root_model", model);
            c.put("prompt", prompt);
            c.put("response", response);
            ObjectNode usage = c.putObject("usage_summary");
            ObjectNode perModel = usage.putObject("model_usage_summaries").putObject(model);
            perModel.put("total_calls", cached ? 0 : child == null ? 1 : modelCalls(child));
            perModel.put("total_input_tokens", in);
            perModel.put("total_output_tokens", out);
            if (cost != null) {
                perModel.put("total_cost", cost);
                usage.put("total_cost", cost);
            }
            c.put("execution_time", seconds(ms));
            c.put("prompt_tokens", in);
            c.put("completion_tokens", out);
            if (child != null) {
                ObjectNode trajectory = c.putObject("metadata");
                trajectory.set("run_metadata", metadata(text(child, "model", model), JSON.missingNode()));
                ArrayNode iterations = trajectory.putArray("iterations");
                iterations.addAll(iterations(child));
            }
            if (error != null) {
                c.put("error", error);
            }
            return c;
        }
    }

    /** The model calls of an RLM and everything under it: its turns, its plain calls, its children's. */
    private static long modelCalls(JsonNode node) {
        long calls = 0;
        for (JsonNode it : node.path("iterations")) {
            calls++;
            for (JsonNode code : it.path("code_blocks")) {
                for (JsonNode sub : code.path("sub_calls")) {
                    if (sub.path("cached").asBoolean()) {
                        continue;
                    }
                    calls += sub.path("child").isObject() ? modelCalls(sub.path("child")) : 1;
                }
            }
        }
        return calls;
    }

    private static ObjectNode line(String type, Integer iteration, String timestamp) {
        ObjectNode line = JSON.createObjectNode().put("type", type);
        if (iteration != null) {
            line.put("iteration", iteration);
        }
        return line.put("timestamp", timestamp);
    }

    /**
     * An instant as ISO-8601 text, {@code plusMs} later (RLMLogger stamps an iteration when it ends);
     * {@code fallback} when there is none. Accepts text and epoch seconds, the two forms Jackson writes.
     */
    private static String timestamp(JsonNode started, double plusMs, String fallback) {
        Instant at;
        try {
            if (started.isNumber()) {
                BigDecimal seconds = started.decimalValue();
                at = Instant.ofEpochSecond(
                        seconds.longValue(),
                        seconds.remainder(BigDecimal.ONE).movePointRight(9).longValue());
            } else if (started.isTextual()) {
                at = Instant.parse(started.asText());
            } else {
                return fallback;
            }
        } catch (DateTimeParseException | ArithmeticException e) {
            return started.asText(fallback);
        }
        return at.plusNanos(Math.round(plusMs * 1e6)).toString();
    }

    private static double seconds(JsonNode ms) {
        return ms.asDouble() / 1000.0;
    }

    private static Double cost(JsonNode node) {
        return node.path("cost_usd").isNumber() ? node.path("cost_usd").asDouble() : null;
    }

    private static String text(JsonNode node, String field, String fallback) {
        return node.path(field).isTextual() ? node.path(field).asText() : fallback;
    }

    private static void number(ObjectNode into, String field, JsonNode value) {
        if (value.isNumber()) {
            into.set(field, value);
        } else {
            into.putNull(field);
        }
    }
}

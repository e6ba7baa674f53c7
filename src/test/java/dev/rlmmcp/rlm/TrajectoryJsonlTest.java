package dev.rlmmcp.rlm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeType;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The export against alexzhang13/rlm's own definitions, transcribed here field by field: the keys
 * its Python dataclasses' {@code to_dict()} and {@code RLMLogger} write (rlm/core/types.py,
 * rlm/logger/rlm_logger.py) and the fields and JSON types its visualizer's TypeScript declares
 * (visualizer/src/lib/types.ts). Every line and every nested object must carry exactly the Python keys
 * (optional ones where Python leaves them out) plus the fields the visualizer reads, with the types
 * both allow.
 */
class TrajectoryJsonlTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<JsonNodeType> STRING = Set.of(JsonNodeType.STRING);
    private static final Set<JsonNodeType> NUMBER = Set.of(JsonNodeType.NUMBER);
    private static final Set<JsonNodeType> OBJECT = Set.of(JsonNodeType.OBJECT);
    private static final Set<JsonNodeType> ARRAY = Set.of(JsonNodeType.ARRAY);

    private static Set<JsonNodeType> orNull(Set<JsonNodeType> types) {
        Set<JsonNodeType> with = new java.util.HashSet<>(types);
        with.add(JsonNodeType.NULL);
        return with;
    }

    /** A field: its JSON types (the intersection of what Python writes and TypeScript accepts) and whether it may be absent. */
    private record Field(Set<JsonNodeType> types, boolean optional) {
        static Field of(Set<JsonNodeType> types) {
            return new Field(types, false);
        }
    }

    // RLMLogger.log_metadata: {"type": "metadata", "timestamp", **RLMMetadata.to_dict()};
    // types.ts RLMConfigMetadata: every field T | null.
    private static final Map<String, Field> METADATA_LINE = fields(
            "type",
            Field.of(STRING),
            "timestamp",
            Field.of(STRING),
            "root_model",
            Field.of(STRING),
            "max_depth",
            Field.of(orNull(NUMBER)),
            "max_iterations",
            Field.of(orNull(NUMBER)),
            "backend",
            Field.of(STRING),
            "backend_kwargs",
            Field.of(OBJECT),
            "environment_type",
            Field.of(STRING),
            "environment_kwargs",
            Field.of(OBJECT),
            "other_backends",
            Field.of(orNull(ARRAY)));
    // RLMMetadata.to_dict() alone, as RLMLogger.get_trajectory() nests it under "run_metadata".
    private static final Map<String, Field> RUN_METADATA = without(METADATA_LINE, "type", "timestamp");
    // RLMLogger.log: {"type": "iteration", "iteration": n, "timestamp", **RLMIteration.to_dict()};
    // types.ts RLMIteration: type?: string; iteration: number; timestamp: string;
    // prompt: Array<{role: string; content: string}>; response: string; code_blocks: CodeBlock[];
    // final_answer: string | [string, string] | null; iteration_time: number | null.
    private static final Map<String, Field> ITERATION_LINE = fields(
            "type",
            Field.of(STRING),
            "iteration",
            Field.of(NUMBER),
            "timestamp",
            Field.of(STRING),
            "prompt",
            Field.of(ARRAY),
            "response",
            Field.of(STRING),
            "code_blocks",
            Field.of(ARRAY),
            "final_answer",
            Field.of(orNull(STRING)),
            "iteration_time",
            Field.of(orNull(NUMBER)));
    private static final Map<String, Field> MESSAGE = fields("role", Field.of(STRING), "content", Field.of(STRING));
    // CodeBlock.to_dict(): {"code", "result"}; types.ts CodeBlock: code: string; result: REPLResult.
    private static final Map<String, Field> CODE_BLOCK = fields("code", Field.of(STRING), "result", Field.of(OBJECT));
    // REPLResult.to_dict(): stdout, stderr, locals, execution_time, rlm_calls, final_answer;
    // types.ts REPLResult: stdout: string; stderr: string; locals: Record<string, unknown>;
    // execution_time: number; rlm_calls: RLMChatCompletion[].
    private static final Map<String, Field> REPL_RESULT = fields(
            "stdout",
            Field.of(STRING),
            "stderr",
            Field.of(STRING),
            "locals",
            Field.of(OBJECT),
            "execution_time",
            Field.of(NUMBER),
            "rlm_calls",
            Field.of(ARRAY),
            "final_answer",
            Field.of(orNull(STRING)));
    // RLMChatCompletion.to_dict(): root_model, prompt, response, usage_summary, execution_time,
    // metadata (only when set), error (only when set); types.ts RLMChatCompletion: prompt: string | object;
    // response: string; prompt_tokens: number; completion_tokens: number; execution_time: number.
    private static final Map<String, Field> COMPLETION = fields(
            "root_model",
            Field.of(STRING),
            "prompt",
            Field.of(Set.of(JsonNodeType.STRING, JsonNodeType.OBJECT)),
            "response",
            Field.of(STRING),
            "usage_summary",
            Field.of(OBJECT),
            "execution_time",
            Field.of(NUMBER),
            "prompt_tokens",
            Field.of(NUMBER),
            "completion_tokens",
            Field.of(NUMBER),
            "metadata",
            new Field(OBJECT, true),
            "error",
            new Field(STRING, true));
    // UsageSummary.to_dict(): model_usage_summaries, total_cost (only when known).
    private static final Map<String, Field> USAGE =
            fields("model_usage_summaries", Field.of(OBJECT), "total_cost", new Field(NUMBER, true));
    // ModelUsageSummary.to_dict(): total_calls, total_input_tokens, total_output_tokens, total_cost (when known).
    private static final Map<String, Field> MODEL_USAGE = fields(
            "total_calls",
            Field.of(NUMBER),
            "total_input_tokens",
            Field.of(NUMBER),
            "total_output_tokens",
            Field.of(NUMBER),
            "total_cost",
            new Field(NUMBER, true));
    // RLMLogger.get_trajectory(): {"run_metadata", "iterations"}, in a child's RLMChatCompletion.metadata.
    private static final Map<String, Field> CHILD_TRAJECTORY =
            fields("run_metadata", Field.of(OBJECT), "iterations", Field.of(ARRAY));

    @Test
    void aDepthTwoRunExportsAsTheLoggerWritesIt() throws Exception {
        JsonNode entry = entry(Trajectories.depthTwoTree());

        List<JsonNode> lines = parse(TrajectoryJsonl.text(entry));

        assertThat(lines).hasSize(3);
        List<String> checked = new ArrayList<>();
        conforms(lines.get(0), METADATA_LINE, "metadata", checked);
        assertThat(lines.get(0).path("type").asText()).isEqualTo("metadata");
        assertThat(lines.get(0).path("root_model").asText()).isEqualTo("root-model");
        assertThat(lines.get(0).path("max_depth").asInt()).isEqualTo(3);
        assertThat(lines.get(0).path("max_iterations").asInt()).isEqualTo(30);
        assertThat(lines.get(0).path("backend").asText()).isEqualTo("openai");
        assertThat(lines.get(0).path("backend_kwargs").path("model_name").asText())
                .isEqualTo("root-model");
        assertThat(lines.get(0).path("environment_kwargs").path("question").asText())
                .isEqualTo(Trajectories.QUESTION);
        assertThat(lines.get(0).path("timestamp").asText()).isEqualTo("2026-11-27T12:00:00Z");
        for (int i = 1; i < lines.size(); i++) {
            iteration(lines.get(i), "iteration " + i, checked);
            assertThat(lines.get(i).path("iteration").asInt()).isEqualTo(i);
        }

        JsonNode first = lines.get(1);
        assertThat(first.path("prompt")).hasSize(2);
        assertThat(first.path("prompt").get(1).path("content").asText())
                .startsWith("Question: " + Trajectories.QUESTION);
        assertThat(first.path("timestamp").asText())
                .as("stamped when the iteration ends")
                .isEqualTo("2026-11-27T12:00:03.100Z");
        assertThat(first.path("iteration_time").asDouble()).isEqualTo(3.1);
        assertThat(first.path("final_answer").isNull()).isTrue();
        JsonNode result = first.path("code_blocks").get(0).path("result");
        assertThat(result.path("stdout").asText()).isEqualTo("['east (200)', 'west (45)']\n");
        assertThat(result.path("execution_time").asDouble()).isEqualTo(2.5);
        assertThat(result.path("locals").properties())
                .extracting(Map.Entry::getKey)
                .containsExactly("halves", "best", "check", "check2");
        JsonNode calls = result.path("rlm_calls");
        assertThat(calls).hasSize(4);
        assertThat(calls.get(0).path("prompt").asText()).isEqualTo("Best region in: north,120 south,80 east,200");
        assertThat(calls.get(0).path("response").asText()).isEqualTo("east (200)");
        assertThat(calls.get(0).path("prompt_tokens").asLong()).isEqualTo(604);
        assertThat(calls.get(0).path("completion_tokens").asLong()).isEqualTo(102);
        assertThat(calls.get(0).path("execution_time").asDouble()).isEqualTo(2.4);
        assertThat(calls.get(0).path("usage_summary").path("total_cost").asDouble())
                .isEqualTo(0.00091);
        assertThat(calls.get(0)
                        .path("usage_summary")
                        .path("model_usage_summaries")
                        .path("root-model")
                        .path("total_calls")
                        .asInt())
                .as("the child's turn, its grandchild's turn and that one's llm_query")
                .isEqualTo(3);
        assertThat(calls.get(2).has("metadata"))
                .as("a plain llm_query has no run of its own")
                .isFalse();
        assertThat(calls.get(3)
                        .path("usage_summary")
                        .path("model_usage_summaries")
                        .path("sub-model")
                        .path("total_calls")
                        .asInt())
                .as("answered from the cache")
                .isZero();

        // Depth 1 and depth 2, nested as the logger nests a child's trajectory.
        JsonNode child = calls.get(0).path("metadata");
        assertThat(child.path("run_metadata").path("max_depth").asInt()).isEqualTo(3);
        JsonNode childCalls = child.path("iterations")
                .get(0)
                .path("code_blocks")
                .get(0)
                .path("result")
                .path("rlm_calls");
        assertThat(childCalls).hasSize(1);
        JsonNode grandchild = childCalls.get(0).path("metadata");
        assertThat(grandchild.path("iterations")).hasSize(1);
        assertThat(grandchild.path("iterations").get(0).path("final_answer").asText())
                .isEqualTo("200");
        JsonNode leaf = grandchild
                .path("iterations")
                .get(0)
                .path("code_blocks")
                .get(0)
                .path("result")
                .path("rlm_calls");
        assertThat(leaf).hasSize(1);
        assertThat(leaf.get(0).path("root_model").asText()).isEqualTo("sub-model");
        assertThat(leaf.get(0).has("metadata")).isFalse();

        JsonNode failed = calls.get(1)
                .path("metadata")
                .path("iterations")
                .get(0)
                .path("code_blocks")
                .get(0);
        assertThat(failed.path("result").path("stderr").asText()).contains("ValueError: invalid literal");
        assertThat(lines.get(2).path("final_answer").asText()).isEqualTo(Trajectories.ANSWER);
        assertThat(lines.get(2).path("prompt"))
                .as("messages [0, 4) of the root")
                .hasSize(4);

        // Every kind of object was met and checked.
        assertThat(checked)
                .contains(
                        "metadata",
                        "iteration 1.prompt[0]",
                        "iteration 1.code_blocks[0].result",
                        "iteration 1.code_blocks[0].result.rlm_calls[0].usage_summary",
                        "iteration 1.code_blocks[0].result.rlm_calls[0].metadata.run_metadata",
                        "iteration 1.code_blocks[0].result.rlm_calls[0].metadata.iterations[0].code_blocks[0].result"
                                + ".rlm_calls[0].metadata.iterations[0].code_blocks[0].result.rlm_calls[0]");
    }

    @Test
    void anAgentStepThatCalledRlmQueryExportsAsOneIterationWithItsCalls() throws Exception {
        ObjectNode entry = JSON.createObjectNode()
                .put("index", 4)
                .put("step", 3)
                .put("kind", "exec")
                .put("at", "2026-11-27T12:10:00Z")
                .put("input", "r = rlm_query('Best region in: west,45', c)")
                .put("status", "ok")
                .put("output", "west (45)\n")
                .put("duration_ms", 1500.0);
        entry.putArray("variables_changed").add("r");
        entry.set("rlm", Trajectories.stepTree());

        List<JsonNode> lines = parse(TrajectoryJsonl.text(entry));

        assertThat(lines).hasSize(2);
        List<String> checked = new ArrayList<>();
        conforms(lines.get(0), METADATA_LINE, "metadata", checked);
        iteration(lines.get(1), "iteration 1", checked);
        JsonNode block = lines.get(1).path("code_blocks").get(0);
        assertThat(block.path("code").asText()).isEqualTo("r = rlm_query('Best region in: west,45', c)");
        assertThat(block.path("result").path("stdout").asText()).isEqualTo("west (45)\n");
        assertThat(block.path("result").path("rlm_calls")).hasSize(1);
        assertThat(block.path("result")
                        .path("rlm_calls")
                        .get(0)
                        .path("metadata")
                        .path("iterations"))
                .hasSize(2);
        assertThat(lines.get(1).path("iteration_time").asDouble()).isEqualTo(1.5);
        assertThat(lines.get(0).path("environment_kwargs").path("run_id").asText())
                .isEqualTo("run-8");
    }

    @Test
    void theTestRunIsInTheFormTheRecordsAreStoredIn() throws Exception {
        ObjectNode stored = (ObjectNode) Trajectories.depthTwoTree();
        // The time limit is written in seconds and read by no one: everything else reads back as written.
        ((ObjectNode) stored.path("limits")).remove("max_time_s");

        JsonNode again = JSON.readTree(JSON.writeValueAsString(JSON.treeToValue(stored, Trajectory.class)));

        assertThat(again).isEqualTo(stored);
    }

    @Test
    void anEntryWithoutARunIsRefused() {
        ObjectNode entry = JSON.createObjectNode().put("index", 2).put("kind", "exec");

        assertThat(TrajectoryJsonl.exportable(entry)).isFalse();
        assertThatThrownBy(() -> TrajectoryJsonl.lines(entry)).hasMessageContaining("trace entry 2 holds no RLM run");
    }

    /** Checks every line against the logger's definitions; returns where it looked. */
    static List<String> conformsToTheLogger(List<JsonNode> lines) {
        List<String> checked = new ArrayList<>();
        conforms(lines.get(0), METADATA_LINE, "metadata", checked);
        assertThat(lines.get(0).path("type").asText()).isEqualTo("metadata");
        for (int i = 1; i < lines.size(); i++) {
            iteration(lines.get(i), "iteration " + i, checked);
            assertThat(lines.get(i).path("iteration").asInt()).isEqualTo(i);
        }
        return checked;
    }

    static List<JsonNode> parse(String text) throws Exception {
        assertThat(text).endsWith("\n");
        List<JsonNode> lines = new ArrayList<>();
        for (String line : text.split("\n")) {
            lines.add(JSON.readTree(line));
        }
        return lines;
    }

    private static JsonNode entry(JsonNode rlm) {
        ObjectNode entry = JSON.createObjectNode()
                .put("index", 0)
                .put("kind", "rlm")
                .put("at", "2026-11-27T12:00:05Z")
                .put("input", Trajectories.QUESTION)
                .put("status", "done")
                .put("output", Trajectories.ANSWER);
        entry.set("rlm", rlm);
        return entry;
    }

    private static void iteration(JsonNode line, String where, List<String> checked) {
        conforms(line, ITERATION_LINE, where, checked);
        assertThat(line.path("type").asText()).isEqualTo("iteration");
        int m = 0;
        for (JsonNode message : line.path("prompt")) {
            conforms(message, MESSAGE, where + ".prompt[" + m++ + "]", checked);
        }
        int b = 0;
        for (JsonNode block : line.path("code_blocks")) {
            String at = where + ".code_blocks[" + b++ + "]";
            conforms(block, CODE_BLOCK, at, checked);
            conforms(block.path("result"), REPL_RESULT, at + ".result", checked);
            int c = 0;
            for (JsonNode call : block.path("result").path("rlm_calls")) {
                completion(call, at + ".result.rlm_calls[" + c++ + "]", checked);
            }
        }
    }

    private static void completion(JsonNode call, String where, List<String> checked) {
        conforms(call, COMPLETION, where, checked);
        conforms(call.path("usage_summary"), USAGE, where + ".usage_summary", checked);
        call.path("usage_summary")
                .path("model_usage_summaries")
                .properties()
                .forEach(e -> conforms(e.getValue(), MODEL_USAGE, where + ".usage_summary." + e.getKey(), checked));
        if (call.has("metadata")) {
            JsonNode trajectory = call.path("metadata");
            conforms(trajectory, CHILD_TRAJECTORY, where + ".metadata", checked);
            conforms(trajectory.path("run_metadata"), RUN_METADATA, where + ".metadata.run_metadata", checked);
            int i = 0;
            for (JsonNode line : trajectory.path("iterations")) {
                iteration(line, where + ".metadata.iterations[" + i++ + "]", checked);
            }
        }
    }

    /** {@code node} has exactly the fields of {@code shape} (optional ones may be absent), each of an allowed type. */
    private static void conforms(JsonNode node, Map<String, Field> shape, String where, List<String> checked) {
        assertThat(node.isObject()).as(where + " is an object").isTrue();
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        assertThat(shape.keySet()).as(where + ": fields no definition has").containsAll(names);
        shape.forEach((name, field) -> {
            if (!field.optional()) {
                assertThat(node.has(name)).as(where + "." + name + " is there").isTrue();
            }
            if (node.has(name)) {
                assertThat(field.types())
                        .as(where + "." + name + " (" + node.get(name) + ") has an allowed type")
                        .contains(node.get(name).getNodeType());
            }
        });
        checked.add(where);
    }

    private static Map<String, Field> fields(Object... pairs) {
        Map<String, Field> map = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            map.put((String) pairs[i], (Field) pairs[i + 1]);
        }
        return map;
    }

    private static Map<String, Field> without(Map<String, Field> shape, String... names) {
        Map<String, Field> map = new LinkedHashMap<>(shape);
        for (String name : names) {
            map.remove(name);
        }
        return map;
    }
}

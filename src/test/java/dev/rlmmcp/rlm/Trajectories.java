package dev.rlmmcp.rlm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * Runs as the engine stores them in the trace, for the tests of what reads them. {@link #depthTwoTree()}
 * is an rlm_solve run ({@link Trajectory} as JSON): RLMs at depths 0, 1 and 2 (the root, two children
 * started by rlm_query_batched, a grandchild under the first), a plain llm_query at the bottom, one
 * answered from the cache, and a code block that failed. {@link #stepTree()} is an agent's step whose
 * code called rlm_query once.
 */
public final class Trajectories {

    public static final String QUESTION = "Which region sold the most?";
    public static final String ANSWER = "east";
    private static final ObjectMapper JSON = new ObjectMapper();

    private Trajectories() {}

    public static JsonNode depthTwoTree() {
        try (InputStream in = Trajectories.class.getResourceAsStream("depth-two-run.json")) {
            return JSON.readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** An exec entry's {@code rlm}: the run of its rlm_query calls, each call with its child's tree. */
    public static JsonNode stepTree() {
        JsonNode call = depthTwoTree()
                .path("root")
                .path("iterations")
                .get(0)
                .path("code_blocks")
                .get(0)
                .path("sub_calls")
                .get(1);
        ObjectNode tree = JSON.createObjectNode().put("run_id", "run-8");
        tree.putObject("figures")
                .put("iterations", 2)
                .put("children", 1)
                .put("children_running", 0)
                .put("depth_reached", 1)
                .put("input_tokens", 550)
                .put("output_tokens", 45)
                .put("cost_usd", 0.0006)
                .put("cache_hits", 0)
                .put("llm_calls", 0)
                .put("elapsed_ms", 1400);
        tree.putArray("calls").add(call);
        return tree;
    }
}

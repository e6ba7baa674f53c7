package dev.rlmmcp.core;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.List;

/**
 * One entry of a session's trace: a code step or a load. {@code step} is the code-step index
 * (null for loads); {@code guardrail} names the guardrail this entry tripped, if any;
 * {@code memoryBytes} is the size of the session's variables once the entry was done; {@code llmUsage}
 * is what the step's llm_query calls used and {@code llmCalls} each of those calls (both null if it made none);
 * {@code rlm} is the tree of the RLM runs the entry holds: a whole run (kind "rlm") or the child RLMs
 * the step's code started with rlm_query ({@code {"children": [node, ...]}}), else null.
 */
public record Step(int index, Integer step, String kind, Instant at, String input, String status, String output,
        List<String> variablesChanged, double durationMs, long ioBytes, String guardrail, long memoryBytes,
        JsonNode llmUsage, JsonNode llmCalls, JsonNode rlm) {
}

package dev.rlmmcp.core;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.List;

/**
 * One entry of a session's trace: a code step or a load. {@code step} is the code-step index
 * (null for loads); {@code guardrail} names the guardrail this entry tripped, if any;
 * {@code memoryBytes} is the size of the session's variables once the entry was done; {@code llmUsage}
 * is what the step's llm_query calls used and {@code llmCalls} each of those calls (both null if it made none);
 * {@code rlm} is an RLM run's tree: the whole run on an entry of kind "rlm", the child RLMs the code
 * started on an "exec" entry (null if none).
 */
public record Step(
        int index,
        Integer step,
        String kind,
        Instant at,
        String input,
        String status,
        String output,
        List<String> variablesChanged,
        double durationMs,
        long ioBytes,
        String guardrail,
        long memoryBytes,
        JsonNode llmUsage,
        JsonNode llmCalls,
        JsonNode rlm) {}

package dev.rlmmcp.llm;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.util.List;

/**
 * What one step's sub-LLM calls used: the backend, calls made, failed and refused, tokens (estimated
 * where the backend gave none), latency, peak concurrency, the session's running totals, and the
 * guardrails the calls ran into.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record LlmUsage(
        String backend,
        int calls,
        int failed,
        int refused,
        long inputTokens,
        long outputTokens,
        Boolean tokensEstimated,
        double latencyMsTotal,
        double latencyMsMax,
        int peakConcurrency,
        int sessionCalls,
        long sessionTokens,
        List<GuardrailEvent> guardrailEvents) {

    /** A call refused by a guardrail: which, with the error code and message the code saw. */
    public record GuardrailEvent(String guardrail, String code, String message) {}
}

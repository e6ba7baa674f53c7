package dev.rlmmcp.rlm;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

/**
 * What a run has done so far, over its whole tree: model turns (iterations of every RLM), child RLMs
 * started and running now, the deepest depth reached, tokens, cost (null when no price is known for
 * the models used), sub-calls answered from the cache, plain llm_query calls, and time.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RunFigures(
        int iterations,
        int children,
        int childrenRunning,
        int depthReached,
        long inputTokens,
        long outputTokens,
        Double costUsd,
        int cacheHits,
        int llmCalls,
        long elapsedMs) {}

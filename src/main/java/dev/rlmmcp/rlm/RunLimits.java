package dev.rlmmcp.rlm;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.time.Duration;

/**
 * The limits and budgets of one root run, shared by every RLM under it. Null means no limit.
 * {@code maxDepth} is the one notion of depth for rlm_query and llm_query: the root RLM is at depth
 * 0, a call made from an RLM's code at depth d is at depth d + 1, and rlm_query at depth
 * {@code maxDepth} or deeper is answered by a plain llm_query. {@code maxIterations} is per RLM;
 * {@code maxChildren} counts child RLMs over the whole tree; {@code concurrency} bounds the children
 * of one rlm_query_batched running at once.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RunLimits(
        int maxDepth,
        int maxIterations,
        Integer maxChildren,
        @JsonIgnore Duration maxTime,
        Long maxInputTokens,
        Long maxOutputTokens,
        Double maxCostUsd,
        int maxConsecutiveErrors,
        int outputCap,
        double compactAt,
        int concurrency) {

    public static final RunLimits DEFAULTS =
            new RunLimits(2, 30, 256, Duration.ofMinutes(30), null, null, null, 5, 20_000, 0.85, 8);

    public RunLimits {
        if (maxDepth < 1
                || maxIterations < 1
                || maxConsecutiveErrors < 1
                || outputCap < 100
                || concurrency < 1
                || compactAt <= 0
                || compactAt > 1
                || (maxChildren != null && maxChildren < 0)
                || (maxTime != null && (maxTime.isNegative() || maxTime.isZero()))) {
            throw new IllegalArgumentException("invalid run limits");
        }
    }

    /** The time limit in seconds, as JSON shows it. */
    @JsonProperty("max_time_s")
    public Long maxTimeS() {
        return maxTime == null ? null : maxTime.toSeconds();
    }
}

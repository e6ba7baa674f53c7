package dev.rlmmcp.llm;

import java.time.Duration;

/**
 * A session's limits on sub-LLM calls. Null means no limit for the counts and the token budget
 * (input plus output tokens, as reported, else estimated at four characters a token).
 */
public record LlmLimits(
        Integer maxCallsPerStep,
        Integer maxCalls,
        int maxConcurrent,
        int maxPromptChars,
        Long tokenBudget,
        Duration callTimeout,
        int maxDepth) {

    public static final LlmLimits DEFAULTS = new LlmLimits(100, 1000, 8, 200_000, null, Duration.ofSeconds(120), 2);

    public LlmLimits {
        if (maxConcurrent < 1
                || maxPromptChars < 1
                || maxDepth < 1
                || callTimeout == null
                || callTimeout.isNegative()
                || callTimeout.isZero()) {
            throw new IllegalArgumentException("invalid llm limits");
        }
    }
}

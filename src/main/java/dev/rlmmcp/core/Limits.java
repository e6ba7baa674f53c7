package dev.rlmmcp.core;

import java.time.Duration;

/**
 * A session's guardrails, so that a runaway agent stops: null means no limit. {@code budgetBytes} bounds the session's
 * I/O: code sent in, output sent back, and data loaded, in UTF-8 bytes.
 */
public record Limits(Integer maxSteps, Long maxRuntimeMs, Long budgetBytes, Duration stepTimeout) {

    public static final Limits NONE = new Limits(null, null, null, null);
}

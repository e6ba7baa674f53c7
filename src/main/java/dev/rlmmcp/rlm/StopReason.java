package dev.rlmmcp.rlm;

import java.util.Locale;

/** The limit that stopped a run (its wire name is the limit's argument name), or its cancellation. */
public enum StopReason {
    MAX_ITERATIONS,
    MAX_CHILDREN,
    MAX_TIME,
    MAX_INPUT_TOKENS,
    MAX_OUTPUT_TOKENS,
    MAX_COST_USD,
    MAX_CONSECUTIVE_ERRORS,
    CANCELLED;

    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }
}

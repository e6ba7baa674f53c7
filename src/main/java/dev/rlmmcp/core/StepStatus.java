package dev.rlmmcp.core;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/** How a step ended: the code ran (ok, or raised), was interrupted with its variables intact, or its kernel was lost. */
public enum StepStatus {
    OK,
    ERROR,
    INTERRUPTED,
    KILLED,
    CRASHED;

    @JsonValue
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }
}

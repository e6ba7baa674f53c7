package dev.rlmmcp.core;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * How loaded bytes become a Python value. Core's own vocabulary, mapped to the kernel's at the wire,
 * so that tools name data types without knowing the kernel. {@link #PICKLE} is the host's own (a
 * child RLM's context, pickled by the kernel that asked for the child): never offered to agents,
 * whose loads choose among {@link #choices()}.
 */
public enum DataType {
    TEXT,
    JSON,
    LINES,
    CSV,
    PICKLE;

    @JsonValue
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Whether an agent may ask for this type: PICKLE runs whatever the pickle names, so the host alone does. */
    public boolean userFacing() {
        return this != PICKLE;
    }

    /** The wire names an agent may choose from. */
    public static List<String> wireNames() {
        return Arrays.stream(values())
                .filter(DataType::userFacing)
                .map(DataType::wireName)
                .toList();
    }

    public static String choices() {
        return String.join(", ", wireNames());
    }
}

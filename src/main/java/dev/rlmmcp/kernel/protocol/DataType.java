package dev.rlmmcp.kernel.protocol;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/** How loaded text becomes a Python value. */
public enum DataType {
    TEXT, JSON, LINES, CSV;

    @JsonValue
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static List<String> wireNames() {
        return Arrays.stream(values()).map(DataType::wireName).toList();
    }

    public static String choices() {
        return Arrays.stream(values()).map(DataType::wireName).collect(Collectors.joining(", "));
    }
}

package dev.rlmmcp.tools;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A tool's input JSON Schema, built in code: an object of named, described properties. */
public final class Schema {

    /** The argument naming a session, and the header (after {@code Mcp-Param-}) it travels in too. */
    public static final String SESSION_ID = "session_id";

    public static final String SESSION_HEADER = "Session-Id";
    private static final String MCP_HEADER = "x-mcp-header";

    private final Map<String, Object> properties = new LinkedHashMap<>();
    private final List<String> required = new ArrayList<>();

    public static Schema object() {
        return new Schema();
    }

    public Schema string(String name, String description, boolean isRequired) {
        return property(name, isRequired, ordered("type", "string", "description", description));
    }

    /** A string out of {@code values}; {@code defaultValue} null declares no default. */
    public Schema choice(String name, String description, List<String> values, String defaultValue) {
        return property(
                name,
                false,
                defaultValue == null
                        ? ordered("type", "string", "description", description, "enum", values)
                        : ordered(
                                "type", "string", "description", description, "enum", values, "default", defaultValue));
    }

    /**
     * The largest whole number a JavaScript client holds exactly (2^53 − 1, {@code Number.MAX_SAFE_INTEGER}):
     * the bound of a count that has none of its own. A larger maximum is read rounded up, and a model that
     * sends back the maximum it was shown would be refused.
     */
    public static final long MAX_INTEGER = (1L << 53) - 1;

    /** A whole number from {@code min} to {@code max}, both within ±{@link #MAX_INTEGER}. */
    public Schema integer(String name, String description, long min, long max) {
        if (Math.abs(min) > MAX_INTEGER || Math.abs(max) > MAX_INTEGER) {
            throw new IllegalArgumentException(name + ": bounds " + min + ".." + max + " beyond ±2^53 − 1");
        }
        return property(
                name, false, ordered("type", "integer", "description", description, "minimum", min, "maximum", max));
    }

    /** A number, not necessarily whole, of at least {@code min}. */
    public Schema number(String name, String description, double min) {
        return property(name, false, ordered("type", "number", "description", description, "minimum", min));
    }

    /**
     * An object whose properties are {@code properties} (name to JSON Schema, in order), none other;
     * {@code isRequired} of the object itself.
     */
    public Schema nested(String name, String description, Map<String, Object> properties, boolean isRequired) {
        return property(
                name,
                isRequired,
                ordered(
                        "type",
                        "object",
                        "description",
                        description,
                        "properties",
                        properties,
                        "additionalProperties",
                        false));
    }

    /** An array of objects whose properties are {@code item} (name to JSON Schema, in order), none other. */
    public Schema objectList(String name, String description, Map<String, Object> item, List<String> itemRequired) {
        return property(
                name,
                false,
                ordered(
                        "type",
                        "array",
                        "items",
                        ordered(
                                "type",
                                "object",
                                "properties",
                                item,
                                "required",
                                itemRequired,
                                "additionalProperties",
                                false),
                        "description",
                        description));
    }

    public Schema stringList(String name, String description) {
        return property(
                name, false, ordered("type", "array", "items", ordered("type", "string"), "description", description));
    }

    public Schema bool(String name, String description) {
        return property(name, false, ordered("type", "boolean", "description", description));
    }

    public Schema sessionId() {
        return string("session_id", "Session to use; omit for this connection's default.", false);
    }

    public Schema responseFormat(ResponseFormat defaultFormat) {
        return choice(ResponseFormat.ARGUMENT, "Reply format.", ResponseFormat.CHOICES, defaultFormat.wireName());
    }

    /**
     * A map that keeps the order it was given in: tools/list must be the same bytes at every start (a
     * start-up answer is checked against the server's own), and Map.of's order changes from one JVM to the next.
     */
    public static Map<String, Object> ordered(Object... keysAndValues) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return Collections.unmodifiableMap(map);
    }

    /**
     * A property of any shape ({@code spec} its JSON Schema). A {@code session_id} is declared with
     * {@code x-mcp-header}, so 2026-07-28 clients repeat it in {@code Mcp-Param-Session-Id} and a load
     * balancer can route a call to its session's node without reading the body.
     */
    Schema property(String name, boolean isRequired, Map<String, Object> spec) {
        if (SESSION_ID.equals(name) && !spec.containsKey(MCP_HEADER)) {
            Map<String, Object> withHeader = new LinkedHashMap<>(spec);
            withHeader.put(MCP_HEADER, SESSION_HEADER);
            spec = Collections.unmodifiableMap(withHeader);
        }
        properties.put(name, spec);
        if (isRequired) {
            required.add(name);
        }
        return this;
    }

    public List<String> names() {
        return List.copyOf(properties.keySet());
    }

    public Map<String, Object> toMap() {
        Map<String, Object> schema = new LinkedHashMap<>();
        schema.put("type", "object");
        schema.put("properties", properties);
        if (!required.isEmpty()) {
            schema.put("required", required);
        }
        schema.put("additionalProperties", false);
        return schema;
    }
}

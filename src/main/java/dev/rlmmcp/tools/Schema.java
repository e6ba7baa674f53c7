package dev.rlmmcp.tools;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A tool's input JSON Schema, built in code: an object of named, described properties. */
public final class Schema {

    private final Map<String, Object> properties = new LinkedHashMap<>();
    private final List<String> required = new ArrayList<>();

    public static Schema object() {
        return new Schema();
    }

    public Schema string(String name, String description, boolean isRequired) {
        return property(name, isRequired, Map.of("type", "string", "description", description));
    }

    /** A string out of {@code values}; {@code defaultValue} null declares no default. */
    public Schema choice(String name, String description, List<String> values, String defaultValue) {
        return property(name, false, defaultValue == null
                ? Map.of("type", "string", "description", description, "enum", values)
                : Map.of("type", "string", "description", description, "enum", values, "default", defaultValue));
    }

    public Schema integer(String name, String description, long min, long max) {
        return property(name, false, Map.of("type", "integer", "description", description, "minimum", min,
                "maximum", max));
    }

    public Schema stringList(String name, String description) {
        return property(name, false, Map.of("type", "array", "items", Map.of("type", "string"), "description",
                description));
    }

    public Schema bool(String name, String description) {
        return property(name, false, Map.of("type", "boolean", "description", description));
    }

    public Schema sessionId() {
        return string("session_id",
                "Session to use; omit it for this connection's default session.", false);
    }

    public Schema responseFormat(ResponseFormat defaultFormat) {
        return choice(ResponseFormat.ARGUMENT, "text: output and a footer of what changed; json: every field.", ResponseFormat.CHOICES,
                defaultFormat.wireName());
    }

    /** A property of any shape ({@code spec} its JSON Schema). */
    Schema property(String name, boolean isRequired, Map<String, Object> spec) {
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

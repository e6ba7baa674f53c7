package dev.rlmmcp.tools;

import com.fasterxml.jackson.annotation.JsonValue;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The JSON Schema of a reply, derived from the record it is serialised from ({@link Replies}): a
 * property per component in snake_case, primitives required, no other properties. Schema and reply
 * come from one declaration, so they cannot drift.
 */
final class ReplySchema {

    private static final PropertyNamingStrategies.SnakeCaseStrategy SNAKE =
            new PropertyNamingStrategies.SnakeCaseStrategy();

    private ReplySchema() {}

    public static Map<String, Object> of(Class<? extends Record> type) {
        return object(type);
    }

    private static Map<String, Object> object(Class<?> record) {
        Schema schema = Schema.object();
        for (RecordComponent c : record.getRecordComponents()) {
            schema.property(SNAKE.translate(c.getName()), c.getType().isPrimitive(), of(c.getGenericType()));
        }
        return schema.toMap();
    }

    private static Map<String, Object> of(Type type) {
        if (type instanceof ParameterizedType p) {
            Class<?> raw = (Class<?>) p.getRawType();
            Type[] args = p.getActualTypeArguments();
            if (List.class.isAssignableFrom(raw)) {
                return Map.of("type", "array", "items", of(args[0]));
            }
            if (Map.class.isAssignableFrom(raw)) {
                return Map.of("type", "object", "additionalProperties", of(args[1]));
            }
            throw new IllegalArgumentException("no schema for " + type);
        }
        Class<?> c = (Class<?>) type;
        if (c == String.class) {
            return Map.of("type", "string");
        }
        if (c == int.class || c == long.class || c == Integer.class || c == Long.class) {
            return Map.of("type", "integer");
        }
        if (c == double.class || c == Double.class) {
            return Map.of("type", "number");
        }
        if (c == boolean.class || c == Boolean.class) {
            return Map.of("type", "boolean");
        }
        if (JsonNode.class.isAssignableFrom(c)) {
            return Map.of();
        }
        if (c.isEnum()) {
            return Map.of(
                    "type",
                    "string",
                    "enum",
                    Arrays.stream(c.getEnumConstants()).map(ReplySchema::wire).toList());
        }
        if (c.isRecord()) {
            return object(c);
        }
        throw new IllegalArgumentException("no schema for " + c);
    }

    private static String wire(Object constant) {
        for (Method m : constant.getClass().getMethods()) {
            if (m.isAnnotationPresent(JsonValue.class)) {
                try {
                    return String.valueOf(m.invoke(constant));
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return ((Enum<?>) constant).name();
    }
}

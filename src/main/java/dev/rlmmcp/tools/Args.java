package dev.rlmmcp.tools;

import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.DataType;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/** A tool call's arguments, read with validation: every refusal names the argument and the fix. */
public final class Args {

    private static final Set<String> KEYWORDS = Set.of(
            "False",
            "None",
            "True",
            "and",
            "as",
            "assert",
            "async",
            "await",
            "break",
            "class",
            "continue",
            "def",
            "del",
            "elif",
            "else",
            "except",
            "finally",
            "for",
            "from",
            "global",
            "if",
            "import",
            "in",
            "is",
            "lambda",
            "nonlocal",
            "not",
            "or",
            "pass",
            "raise",
            "return",
            "try",
            "while",
            "with",
            "yield");

    private final String tool;
    private final Map<String, Object> values;

    private final List<String> ignored;

    /**
     * The arguments of a call to {@code tool}, which takes {@code allowed}: others are ignored, or refused
     * when they look like a misspelling of one it takes (see {@link UnknownArguments}).
     */
    public Args(String tool, Map<String, Object> values, List<String> allowed) {
        this.tool = tool;
        this.values = values == null ? Map.of() : values;
        this.ignored = UnknownArguments.ignored(tool, this.values.keySet(), allowed);
    }

    /** The arguments the tool does not take and ignores, for the reply to name (sorted). */
    public List<String> ignored() {
        return ignored;
    }

    public String requiredString(String name) {
        String value = optionalString(name);
        if (value == null) {
            throw RlmException.invalid(name, tool + " needs the argument " + name, "pass " + name + " as a string");
        }
        return value;
    }

    public String optionalString(String name) {
        Object value = values.get(name);
        if (value == null) {
            return null;
        }
        if (!(value instanceof String s)) {
            throw RlmException.invalid(
                    name, name + " must be a string, not " + jsonType(value), "pass " + name + " as a JSON string");
        }
        return s;
    }

    /** An optional array of strings; empty when absent. */
    public List<String> stringList(String name) {
        Object value = values.get(name);
        if (value == null) {
            return List.of();
        }
        if (!(value instanceof List<?> list) || !list.stream().allMatch(String.class::isInstance)) {
            throw RlmException.invalid(
                    name,
                    name + " must be an array of strings, not " + jsonType(value),
                    "pass " + name + " as a JSON array of strings, e.g. [\"everything\"]");
        }
        return list.stream().map(String.class::cast).toList();
    }

    /** An optional array of JSON objects; empty when absent. */
    public List<Map<String, Object>> objectList(String name, String fix) {
        Object value = values.get(name);
        if (value == null) {
            return List.of();
        }
        if (!(value instanceof List<?> list) || !list.stream().allMatch(Map.class::isInstance)) {
            throw RlmException.invalid(name, name + " must be an array of objects, not " + jsonType(value), fix);
        }
        List<Map<String, Object>> objects = new java.util.ArrayList<>();
        for (Object o : list) {
            Map<String, Object> object = new java.util.LinkedHashMap<>();
            ((Map<?, ?>) o).forEach((k, v) -> object.put(String.valueOf(k), v));
            objects.add(object);
        }
        return objects;
    }

    public String sessionId() {
        String id = optionalString("session_id");
        if (id != null && id.isBlank()) {
            throw RlmException.invalid(
                    "session_id",
                    "session_id is empty",
                    "omit session_id for the default session, or pass an id returned by an earlier call");
        }
        return id;
    }

    public boolean flag(String name) {
        Object value = values.get(name);
        if (value == null) {
            return false;
        }
        if (!(value instanceof Boolean b)) {
            throw RlmException.invalid(
                    name,
                    name + " must be true or false, not " + jsonType(value),
                    "pass " + name + " as a JSON boolean");
        }
        return b;
    }

    /** An optional whole number within [min, max]; {@code null} when absent. */
    public Long integer(String name, long min, long max) {
        Object value = values.get(name);
        if (value == null) {
            return null;
        }
        String fix = "pass " + name + " as an integer between " + min + " and " + max;
        if (!(value instanceof Number number)) {
            throw RlmException.invalid(
                    name,
                    name + " must be a whole number, not " + jsonType(value)
                            + (value instanceof String s ? " '" + shorten(s) + "'" : ""),
                    fix);
        }
        BigDecimal exact = exact(number);
        if (exact == null) {
            throw RlmException.invalid(
                    name,
                    name + " is a number too large to hold, outside " + min + ".." + max,
                    "pass " + name + " between " + min + " and " + max);
        }
        if (exact.stripTrailingZeros().scale() > 0) {
            throw RlmException.invalid(name, name + " must be a whole number, not " + shorten(number.toString()), fix);
        }
        if (exact.compareTo(BigDecimal.valueOf(min)) < 0 || exact.compareTo(BigDecimal.valueOf(max)) > 0) {
            throw RlmException.invalid(
                    name,
                    name + " is " + shorten(exact.toBigInteger().toString()) + ", outside " + min + ".." + max,
                    "pass " + name + " between " + min + " and " + max);
        }
        return exact.longValueExact();
    }

    /** An optional number, whole or not, of at least {@code min} and finite; {@code null} when absent. */
    public Double number(String name, double min) {
        Object value = values.get(name);
        if (value == null) {
            return null;
        }
        String fix = "pass " + name + " as a number of at least " + min + ", e.g. 0.5";
        if (!(value instanceof Number number)) {
            throw RlmException.invalid(
                    name,
                    name + " must be a number, not " + jsonType(value)
                            + (value instanceof String s ? " '" + shorten(s) + "'" : ""),
                    fix);
        }
        double d = number.doubleValue();
        if (!Double.isFinite(d) || d < min) {
            throw RlmException.invalid(name, name + " is " + shorten(number.toString()) + ", below " + min, fix);
        }
        return d;
    }

    /** An optional JSON object; {@code null} when absent. */
    public Map<String, Object> object(String name, String fix) {
        Object value = values.get(name);
        if (value == null) {
            return null;
        }
        if (!(value instanceof Map<?, ?> map)) {
            throw RlmException.invalid(name, name + " must be an object, not " + jsonType(value), fix);
        }
        Map<String, Object> object = new java.util.LinkedHashMap<>();
        map.forEach((k, v) -> object.put(String.valueOf(k), v));
        return object;
    }

    /** A JSON number exactly, or null for one that is not finite. */
    private static BigDecimal exact(Number n) {
        return switch (n) {
            case BigDecimal d -> d;
            case BigInteger i -> new BigDecimal(i);
            case Integer i -> BigDecimal.valueOf(i);
            case Long l -> BigDecimal.valueOf(l);
            default -> Double.isFinite(n.doubleValue()) ? new BigDecimal(n.doubleValue()) : null;
        };
    }

    private static String shorten(String s) {
        return s.length() <= 24 ? s : s.substring(0, 24) + "...";
    }

    public DataType dataType(String name) {
        String value = optionalString(name);
        if (value == null) {
            return DataType.TEXT;
        }
        DataType type;
        try {
            type = DataType.valueOf(value.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            type = null;
        }
        if (type == null || !type.userFacing()) {
            throw RlmException.invalid(
                    name,
                    name + " is '" + value + "', which is not a known data type",
                    "use one of: " + DataType.choices());
        }
        return type;
    }

    /**
     * A name the REPL can bind: a Python identifier, not a keyword, not a dunder name. The names the
     * kernel reserves for itself come from its ready frame, and the session refuses them.
     */
    public String variableName(String name) {
        String value = requiredString(name);
        String fix = "use a Python identifier such as logs or rows_2024";
        if (value.isEmpty() || !isIdentifier(value)) {
            throw RlmException.invalid(name, "'" + value + "' is not a valid Python variable name", fix);
        }
        if (KEYWORDS.contains(value)) {
            throw RlmException.invalid(name, "'" + value + "' is a Python keyword", fix);
        }
        if (value.startsWith("__")) {
            throw RlmException.invalid(name, "'" + value + "' is reserved by rlm-mcp", "choose another name; " + fix);
        }
        return value;
    }

    private static boolean isIdentifier(String s) {
        int first = s.codePointAt(0);
        if (first != '_' && !Character.isUnicodeIdentifierStart(first)) {
            return false;
        }
        return s.codePoints()
                .skip(1)
                .allMatch(
                        c -> c == '_' || (Character.isUnicodeIdentifierPart(c) && !Character.isIdentifierIgnorable(c)));
    }

    /** A JSON value's type in words, for messages. */
    static String jsonType(Object value) {
        return switch (value) {
            case String s -> "a string";
            case Boolean b -> "a boolean";
            case Number n -> "a number";
            case List<?> l -> "an array";
            case Map<?, ?> m -> "an object";
            default -> "another JSON value";
        };
    }
}

package dev.rlmmcp.tools;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A TOON encoder (Token-Oriented Object Notation, specification 4.0): JSON as indented lines, with
 * uniform arrays of objects as tables, uniform objects of objects as keyed tables, and primitive
 * arrays inline. The only maintained Java library (JToon) brings Jackson 3; this is the encoder alone,
 * checked against the specification's encoder fixtures. Every header uses the document delimiter.
 */
final class Toon {

    private static final Pattern UNQUOTED_KEY = Pattern.compile("[A-Za-z_][A-Za-z0-9_.]*");
    private static final Pattern NUMERIC_LIKE = Pattern.compile("[+-]?[0-9]+(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?");
    private static final BigDecimal PLAIN_MIN = new BigDecimal("1e-6");
    private static final BigDecimal PLAIN_MAX = new BigDecimal("1e21");

    private final char delimiter;
    private final String indentUnit;
    private final List<String> lines = new ArrayList<>();

    private Toon(char delimiter, int indentSize) {
        this.delimiter = delimiter;
        this.indentUnit = " ".repeat(indentSize);
    }

    /** TOON with comma delimiters and two-space indentation. */
    public static String encode(JsonNode value) {
        return encode(value, ',', 2);
    }

    /** TOON with the given delimiter (comma, tab or pipe) and indentation width. */
    public static String encode(JsonNode value, char delimiter, int indentSize) {
        if (delimiter != ',' && delimiter != '\t' && delimiter != '|') {
            throw new IllegalArgumentException("TOON delimiters are comma, tab and pipe, not " + delimiter);
        }
        Toon toon = new Toon(delimiter, indentSize);
        toon.root(value);
        return String.join("\n", toon.lines);
    }

    private void root(JsonNode value) {
        if (value.isArray()) {
            array("", value, 0);
        } else if (value.isObject()) {
            List<Field> keyed = keyedFields(value);
            if (keyed != null) {
                keyedTable("", value, keyed, 0);
            } else {
                fields(value, 0);
            }
        } else {
            line(0, primitive(value));
        }
    }

    private void fields(JsonNode object, int depth) {
        for (Map.Entry<String, JsonNode> e : object.properties()) {
            field(key(e.getKey()), e.getValue(), depth);
        }
    }

    private void field(String key, JsonNode value, int depth) {
        if (value.isArray()) {
            array(key, value, depth);
        } else if (value.isObject()) {
            List<Field> keyed = keyedFields(value);
            if (keyed != null) {
                keyedTable(key, value, keyed, depth);
            } else {
                line(depth, key + ":");
                fields(value, depth + 1);
            }
        } else {
            line(depth, key + ": " + primitive(value));
        }
    }

    /** An array under {@code key} ("" at the root): inline, tabular or as a list. */
    private void array(String key, JsonNode array, int depth) {
        if (array.isEmpty()) {
            line(depth, key.isEmpty() ? "[]" : key + ": []");
            return;
        }
        if (allPrimitive(array)) {
            line(depth, key + bracket(array.size()) + ": " + inline(array));
            return;
        }
        List<Field> table = tableFields(elements(array));
        if (table != null) {
            line(depth, key + bracket(array.size()) + "{" + header(table) + "}:");
            for (JsonNode row : array) {
                line(depth + 1, cells(row, table));
            }
            return;
        }
        line(depth, key + bracket(array.size()) + ":");
        for (JsonNode item : array) {
            listItem(item, depth + 1);
        }
    }

    private void keyedTable(String key, JsonNode object, List<Field> table, int depth) {
        line(depth, key + "[" + object.size() + ":" + delimiterSymbol() + "]{" + header(table) + "}:");
        for (Map.Entry<String, JsonNode> e : object.properties()) {
            line(depth + 1, key(e.getKey()) + ": " + cells(e.getValue(), table));
        }
    }

    private void listItem(JsonNode item, int depth) {
        if (item.isArray()) {
            if (allPrimitive(item)) {
                line(depth, "- " + bracket(item.size()) + ":" + (item.isEmpty() ? "" : " " + inline(item)));
            } else {
                line(depth, "- " + bracket(item.size()) + ":");
                for (JsonNode inner : item) {
                    listItem(inner, depth + 1);
                }
            }
        } else if (item.isObject()) {
            if (item.isEmpty()) {
                line(depth, "-");
                return;
            }
            // The object's fields stand one level deeper; its first field moves up onto the hyphen line.
            int first = lines.size();
            fields(item, depth + 1);
            lines.set(
                    first,
                    indent(depth) + "- "
                            + lines.get(first).substring(indent(depth + 1).length()));
        } else {
            line(depth, "- " + primitive(item));
        }
    }

    /** A column tree for a table of these objects, or null if they are not uniform (spec 9.3). */
    private static List<Field> tableFields(List<JsonNode> objects) {
        if (objects.isEmpty()) {
            return null;
        }
        Set<String> keys = null;
        for (JsonNode o : objects) {
            if (!o.isObject() || o.isEmpty()) {
                return null;
            }
            Set<String> these = new LinkedHashSet<>();
            o.fieldNames().forEachRemaining(these::add);
            if (keys == null) {
                keys = these;
            } else if (!keys.equals(these)) {
                return null;
            }
        }
        List<Field> fields = new ArrayList<>();
        for (String name : keys) {
            List<JsonNode> column = objects.stream().map(o -> o.get(name)).toList();
            if (column.stream().allMatch(Toon::isPrimitive)) {
                fields.add(new Field(name, null));
            } else {
                List<Field> group = tableFields(column);
                if (group == null) {
                    return null;
                }
                fields.add(new Field(name, group));
            }
        }
        return fields;
    }

    /** The column tree of an object of at least two uniform objects (spec 9.5), else null. */
    private static List<Field> keyedFields(JsonNode object) {
        return object.size() < 2 ? null : tableFields(elements(object));
    }

    private String header(List<Field> fields) {
        StringBuilder out = new StringBuilder();
        for (Field f : fields) {
            if (!out.isEmpty()) {
                out.append(delimiter);
            }
            out.append(key(f.name()));
            if (f.group() != null) {
                out.append('{').append(header(f.group())).append('}');
            }
        }
        return out.toString();
    }

    private String cells(JsonNode row, List<Field> fields) {
        List<String> cells = new ArrayList<>();
        leaves(row, fields, cells);
        return String.join(String.valueOf(delimiter), cells);
    }

    private void leaves(JsonNode object, List<Field> fields, List<String> out) {
        for (Field f : fields) {
            JsonNode value = object.get(f.name());
            if (f.group() == null) {
                out.add(primitive(value));
            } else {
                leaves(value, f.group(), out);
            }
        }
    }

    private String inline(JsonNode array) {
        List<String> values = new ArrayList<>();
        array.forEach(v -> values.add(primitive(v)));
        return String.join(String.valueOf(delimiter), values);
    }

    private String bracket(int n) {
        return "[" + n + delimiterSymbol() + "]";
    }

    private String delimiterSymbol() {
        return delimiter == ',' ? "" : String.valueOf(delimiter);
    }

    private String primitive(JsonNode value) {
        if (value == null || value.isNull()) {
            return "null";
        }
        if (value.isBoolean()) {
            return value.asBoolean() ? "true" : "false";
        }
        if (value.isNumber()) {
            return number(value);
        }
        String s = value.asText();
        return needsQuotes(s) ? quote(s) : s;
    }

    private boolean needsQuotes(String s) {
        if (s.isEmpty() || s.equals("true") || s.equals("false") || s.equals("null")) {
            return true;
        }
        char first = s.charAt(0);
        char last = s.charAt(s.length() - 1);
        if (first == ' ' || first == '\t' || last == ' ' || last == '\t' || first == '-' || first == '#') {
            return true;
        }
        if (NUMERIC_LIKE.matcher(s).matches()) {
            return true;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20
                    || c == ':'
                    || c == '"'
                    || c == '\\'
                    || c == '['
                    || c == ']'
                    || c == '{'
                    || c == '}'
                    || c == delimiter) {
                return true;
            }
        }
        return false;
    }

    /** Canonical numbers: no exponent in [1e-6, 1e21), no trailing zeros, -0 as 0, NaN and infinities as null. */
    static String number(JsonNode value) {
        if (value.isIntegralNumber()) {
            return value.bigIntegerValue().toString();
        }
        BigDecimal decimal;
        if (value.isBigDecimal()) {
            decimal = value.decimalValue();
        } else {
            double d = value.doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                return "null";
            }
            decimal = new BigDecimal(Double.toString(d));
        }
        if (decimal.signum() == 0) {
            return "0";
        }
        decimal = decimal.stripTrailingZeros();
        BigDecimal magnitude = decimal.abs();
        if (magnitude.compareTo(PLAIN_MIN) >= 0 && magnitude.compareTo(PLAIN_MAX) < 0) {
            return decimal.toPlainString();
        }
        String scientific = decimal.toString().replace('E', 'e');
        return scientific.contains("e") ? scientific : decimal.toPlainString();
    }

    private static String key(String name) {
        return UNQUOTED_KEY.matcher(name).matches() ? name : quote(name);
    }

    private static String quote(String s) {
        StringBuilder out = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '\\' -> out.append("\\\\");
                case '"' -> out.append("\\\"");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }

    private static boolean isPrimitive(JsonNode value) {
        return value == null || value.isValueNode();
    }

    private static boolean allPrimitive(JsonNode array) {
        for (JsonNode v : array) {
            if (!isPrimitive(v)) {
                return false;
            }
        }
        return true;
    }

    private static List<JsonNode> elements(JsonNode container) {
        List<JsonNode> out = new ArrayList<>(container.size());
        Iterator<JsonNode> it = container.elements();
        it.forEachRemaining(out::add);
        return out;
    }

    private String indent(int depth) {
        return indentUnit.repeat(depth);
    }

    private void line(int depth, String text) {
        lines.add(indent(depth) + text);
    }

    /** A table column: a leaf (group null) or a nested field group. */
    private record Field(String name, List<Field> group) {}
}

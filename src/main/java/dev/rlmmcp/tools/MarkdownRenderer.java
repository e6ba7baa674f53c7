package dev.rlmmcp.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Writes any tool reply as compact Markdown carrying the same facts as its JSON: a title from the
 * tool and status, scalars as {@code key: value}, output and code in fenced blocks, lists of objects
 * as bullets, nested objects on one line, and errors as {@code **ERROR CODE**: message}.
 */
final class MarkdownRenderer {

    /** Strings shown verbatim (in code) even when they fit on one line. */
    private static final Set<String> VERBATIM =
            Set.of("stdout", "stderr", "traceback", "preview", "code", "value", "output", "text");

    private static final Pattern BACKTICKS = Pattern.compile("`+");
    private static final String SEPARATOR = " · ";

    private MarkdownRenderer() {}

    public static String render(String tool, ObjectNode reply) {
        StringBuilder md = new StringBuilder("## ").append(tool);
        JsonNode status = reply.get("status");
        if (status != null && status.isTextual()) {
            md.append(": ").append(status.asText());
        } else if (reply.path("error").has("code")) {
            md.append(": refused");
        }
        md.append('\n');
        for (Map.Entry<String, JsonNode> e : reply.properties()) {
            if (!(e.getKey().equals("status") && e.getValue().isTextual())) {
                field(md, e.getKey(), e.getValue());
            }
        }
        return md.toString();
    }

    private static void field(StringBuilder md, String key, JsonNode value) {
        if (value.isNull()
                || value.isMissingNode()
                || (value.isTextual() && value.asText().isEmpty())) {
            return;
        }
        if (key.equals("error") && value.isObject()) {
            error(md, value);
        } else if (value.isTextual() && verbatim(key, value.asText())) {
            fenced(md, key, value.asText(), "");
        } else if (value.isValueNode()) {
            md.append(key).append(": ").append(value.asText()).append('\n');
        } else if (value.isArray()) {
            array(md, key, value);
        } else {
            object(md, key, value);
        }
    }

    private static void error(StringBuilder md, JsonNode error) {
        String id = error.path("code").asText(error.path("type").asText("error"));
        md.append("**ERROR ")
                .append(id)
                .append("**: ")
                .append(error.path("message").asText())
                .append('\n');
        for (Map.Entry<String, JsonNode> e : error.properties()) {
            if (!Set.of("code", "type", "message").contains(e.getKey())) {
                field(md, e.getKey(), e.getValue());
            }
        }
    }

    private static void array(StringBuilder md, String key, JsonNode array) {
        if (array.isEmpty()) {
            md.append(key).append(": none\n");
        } else if (all(array, JsonNode::isValueNode)) {
            List<String> items = new ArrayList<>();
            array.forEach(item -> items.add(item.asText()));
            md.append(key).append(": ").append(String.join(", ", items)).append('\n');
        } else if (all(array, JsonNode::isObject)) {
            md.append(key).append(" (").append(array.size()).append("):\n");
            array.forEach(item -> bullet(md, item));
        } else {
            md.append(key).append(": ").append(array).append('\n');
        }
    }

    /** One list item: its one-line fields joined on the bullet line, longer text in blocks below it. */
    private static void bullet(StringBuilder md, JsonNode item) {
        List<String> parts = new ArrayList<>();
        List<Map.Entry<String, JsonNode>> blocks = new ArrayList<>();
        for (Map.Entry<String, JsonNode> e : item.properties()) {
            JsonNode v = e.getValue();
            if (v.isTextual() && v.asText().contains("\n")) {
                blocks.add(e);
            } else if (!v.isNull() && !(v.isTextual() && v.asText().isEmpty())) {
                parts.add(e.getKey() + ": " + inline(e.getKey(), v));
            }
        }
        md.append("- ").append(String.join(SEPARATOR, parts)).append('\n');
        blocks.forEach(e -> fenced(md, e.getKey(), e.getValue().asText(), "  "));
    }

    /** A nested object on one line; its long strings in blocks labelled {@code key.member}. */
    private static void object(StringBuilder md, String key, JsonNode object) {
        List<String> parts = new ArrayList<>();
        List<Map.Entry<String, JsonNode>> blocks = new ArrayList<>();
        for (Map.Entry<String, JsonNode> e : object.properties()) {
            JsonNode v = e.getValue();
            if (v.isTextual() && verbatim(e.getKey(), v.asText())) {
                blocks.add(e);
            } else if (!v.isNull()) {
                parts.add(e.getKey() + ": " + (v.isValueNode() ? v.asText() : v.toString()));
            }
        }
        if (!parts.isEmpty() || blocks.isEmpty()) {
            md.append(key).append(": ").append(String.join(SEPARATOR, parts)).append('\n');
        }
        blocks.forEach(e -> fenced(md, key + "." + e.getKey(), e.getValue().asText(), ""));
    }

    private static String inline(String key, JsonNode value) {
        if (!value.isValueNode()) {
            return value.toString();
        }
        String text = value.asText();
        if (!(value.isTextual() && VERBATIM.contains(key))) {
            return text;
        }
        String ticks = "`".repeat(longestBacktickRun(text) + 1);
        String pad = text.startsWith("`") || text.endsWith("`") ? " " : "";
        return ticks + pad + text + pad + ticks;
    }

    private static void fenced(StringBuilder md, String label, String text, String indent) {
        String fence = "`".repeat(Math.max(3, longestBacktickRun(text) + 1));
        md.append(indent)
                .append(label)
                .append(":\n")
                .append(indent)
                .append(fence)
                .append('\n');
        text.lines().forEach(line -> md.append(indent).append(line).append('\n'));
        md.append(indent).append(fence).append('\n');
    }

    private static boolean verbatim(String key, String text) {
        return VERBATIM.contains(key) || text.contains("\n");
    }

    private static int longestBacktickRun(String text) {
        int longest = 0;
        Matcher m = BACKTICKS.matcher(text);
        while (m.find()) {
            longest = Math.max(longest, m.end() - m.start());
        }
        return longest;
    }

    private static boolean all(JsonNode array, Predicate<JsonNode> test) {
        for (JsonNode item : array) {
            if (!test.test(item)) {
                return false;
            }
        }
        return true;
    }
}

package dev.rlmmcp.rlm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Keeps a run's tree within what one trace entry may hold: a tree of many children, each with many
 * turns, would otherwise put tens of megabytes into the session's database. Past the budget, long texts
 * are clipped, shorter and shorter, until it fits; the tree keeps its shape and every figure.
 */
final class TraceBudget {

    static final int BUDGET_CHARS = 4 << 20;
    private static final int[] CLIPS = {4_000, 1_000, 200};

    private TraceBudget() {}

    static JsonNode fit(JsonNode tree) {
        for (int clip : CLIPS) {
            if (size(tree) <= BUDGET_CHARS) {
                return tree;
            }
            clipTexts(tree, clip);
            if (tree instanceof ObjectNode o) {
                o.put("clipped_to_chars", clip);
            }
        }
        return tree;
    }

    private static long size(JsonNode node) {
        if (node.isTextual()) {
            return node.asText().length() + 2;
        }
        long n = 2;
        if (node instanceof ObjectNode o) {
            for (Map.Entry<String, JsonNode> e : o.properties()) {
                n += e.getKey().length() + 4 + size(e.getValue());
            }
        } else if (node instanceof ArrayNode a) {
            for (JsonNode child : a) {
                n += 1 + size(child);
            }
        } else {
            n += node.toString().length();
        }
        return n;
    }

    private static void clipTexts(JsonNode node, int clip) {
        if (node instanceof ObjectNode o) {
            List<String> names = new ArrayList<>();
            o.fieldNames().forEachRemaining(names::add);
            for (String name : names) {
                JsonNode v = o.get(name);
                if (v.isTextual() && v.asText().length() > clip) {
                    o.set(name, clipped(v.asText(), clip));
                } else {
                    clipTexts(v, clip);
                }
            }
        } else if (node instanceof ArrayNode a) {
            for (int i = 0; i < a.size(); i++) {
                JsonNode v = a.get(i);
                if (v.isTextual() && v.asText().length() > clip) {
                    a.set(i, clipped(v.asText(), clip));
                } else {
                    clipTexts(v, clip);
                }
            }
        }
    }

    private static TextNode clipped(String text, int clip) {
        return TextNode.valueOf(text.substring(0, clip) + "… [" + (text.length() - clip) + " more characters]");
    }
}

package dev.rlmmcp.tools;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A trace entry's RLM runs as an indented tree for rlm_get_trace's text: a line per RLM (depth, model,
 * prompt, iterations, answer, how it ended, tokens, cost, time), under it a line per iteration (its code
 * blocks, failures, sub-calls, answer), and each child RLM indented under the iteration that started it.
 */
final class RlmTreeText {

    private static final int PROMPT_CHARS = 80;
    private static final int ANSWER_CHARS = 80;
    private static final String INDENT = "  ";
    /** Lines of one entry's tree in a trace listing; the export has the whole run. */
    static final int MAX_LINES = 120;

    private RlmTreeText() {}

    /** The tree of entry {@code step} (its JSON view), at most {@link #MAX_LINES} lines, or "" when it holds no run. */
    static String of(JsonNode step) {
        String tree = whole(step);
        String[] lines = tree.split("\n", -1);
        if (lines.length - 1 <= MAX_LINES) {
            return tree;
        }
        return String.join("\n", java.util.Arrays.copyOf(lines, MAX_LINES)) + "\n[" + (lines.length - 1 - MAX_LINES)
                + " more lines; the whole run: export \"rlm_jsonl\" with entry "
                + step.path("index").asText() + "]\n";
    }

    private static String whole(JsonNode step) {
        JsonNode rlm = step.path("rlm");
        StringBuilder text = new StringBuilder();
        if (rlm.path("root").isObject()) {
            text.append("entry ")
                    .append(step.path("index").asText())
                    .append(" rlm run ")
                    .append(rlm.path("run_id").asText(""))
                    .append(outcome(rlm.path("outcome")))
                    .append('\n');
            node(text, rlm.path("root"), 1);
        } else if (rlm.path("calls").isArray() && !rlm.path("calls").isEmpty()) {
            int n = rlm.path("calls").size();
            text.append("entry ")
                    .append(step.path("index").asText())
                    .append(" (step ")
                    .append(step.path("step").asText("?"))
                    .append(") rlm_query run ")
                    .append(rlm.path("run_id").asText(""))
                    .append(" (")
                    .append(count(n, "call", "calls"))
                    .append(')')
                    .append(figures(rlm.path("figures")))
                    .append('\n');
            for (JsonNode call : rlm.path("calls")) {
                if (call.path("child").isObject()) {
                    node(text, call.path("child"), 1);
                } else {
                    text.append(INDENT)
                            .append(call.path("kind").asText("llm"))
                            .append(" call at the depth limit · \"")
                            .append(line(call.path("prompt").asText(""), PROMPT_CHARS))
                            .append("\" · ")
                            .append(
                                    call.hasNonNull("error")
                                            ? "failed: "
                                                    + line(call.path("error").asText(), ANSWER_CHARS)
                                            : "answer \""
                                                    + line(call.path("response").asText(""), ANSWER_CHARS) + "\"")
                            .append(" · ")
                            .append(usage(call))
                            .append('\n');
                }
            }
        }
        return text.toString();
    }

    private static String outcome(JsonNode outcome) {
        if (!outcome.isObject()) {
            return "";
        }
        String figures = figures(outcome.path("figures"));
        if (outcome.hasNonNull("stopped_by")) {
            return ": stopped by " + outcome.path("stopped_by").asText()
                    + (figures.isEmpty() ? "" : "," + figures.substring(1));
        }
        return figures;
    }

    /** A run's figures after a colon, or "". */
    private static String figures(JsonNode f) {
        if (!f.isObject()) {
            return "";
        }
        List<String> parts = new ArrayList<>();
        parts.add(count(f.path("iterations").asInt(), "iteration", "iterations"));
        parts.add(count(f.path("children").asInt(), "child", "children"));
        parts.add("depth " + f.path("depth_reached").asInt());
        if (f.path("cache_hits").asInt() > 0) {
            parts.add(count(f.path("cache_hits").asInt(), "cache hit", "cache hits"));
        }
        return ": " + String.join(", ", parts);
    }

    private static void node(StringBuilder text, JsonNode node, int level) {
        String pad = INDENT.repeat(level);
        int iterations = node.path("iterations").size();
        List<String> parts = new ArrayList<>();
        parts.add("RLM depth " + node.path("depth").asInt());
        if (node.hasNonNull("model")) {
            parts.add(node.path("model").asText());
        }
        parts.add("\"" + line(node.path("prompt").asText(""), PROMPT_CHARS) + "\"");
        parts.add(iterations + (iterations == 1 ? " iteration" : " iterations"));
        parts.add(ended(node));
        parts.add(usage(node));
        text.append(pad).append(String.join(" · ", parts)).append('\n');
        int n = 0;
        for (JsonNode it : node.path("iterations")) {
            n++;
            text.append(pad).append(INDENT).append(iteration(it, n)).append('\n');
            for (JsonNode code : it.path("code_blocks")) {
                for (JsonNode sub : code.path("sub_calls")) {
                    if (sub.path("child").isObject()) {
                        node(text, sub.path("child"), level + 2);
                    }
                }
            }
        }
    }

    private static String ended(JsonNode node) {
        String answer = node.hasNonNull("answer")
                ? "answer \"" + line(node.path("answer").asText(), ANSWER_CHARS) + "\""
                : "no answer";
        if (node.hasNonNull("stopped_by")) {
            return answer + " (stopped by " + node.path("stopped_by").asText() + ")";
        }
        return answer + (node.path("ready").asBoolean() ? " (ready)" : " (not ready)");
    }

    private static String iteration(JsonNode it, int n) {
        List<String> parts = new ArrayList<>();
        parts.add("iteration " + n);
        int blocks = it.path("code_blocks").size();
        int failed = 0;
        int rlm = 0;
        int llm = 0;
        int cached = 0;
        for (JsonNode code : it.path("code_blocks")) {
            if (code.hasNonNull("error")) {
                failed++;
            }
            for (JsonNode sub : code.path("sub_calls")) {
                if ("rlm".equals(sub.path("kind").asText())) {
                    rlm++;
                } else {
                    llm++;
                }
                if (sub.path("cached").asBoolean()) {
                    cached++;
                }
            }
        }
        parts.add(
                blocks == 0
                        ? "no code"
                        : blocks
                                + (blocks == 1 ? " code block" : " code blocks")
                                + (failed > 0 ? " (" + failed + " failed)" : ""));
        if (rlm > 0) {
            parts.add("rlm_query ×" + rlm);
        }
        if (llm > 0) {
            parts.add("llm_query ×" + llm + (cached > 0 ? " (" + cached + " cached)" : ""));
        }
        if (it.hasNonNull("note")) {
            parts.add(line(it.path("note").asText(), ANSWER_CHARS));
        }
        if (it.hasNonNull("final_answer")) {
            parts.add("final answer \"" + line(it.path("final_answer").asText(), ANSWER_CHARS) + "\"");
        }
        parts.add(usage(it));
        return String.join(" · ", parts);
    }

    /** Tokens, cost and time of an RLM or an iteration. */
    private static String usage(JsonNode n) {
        String text =
                n.path("input_tokens").asLong() + "/" + n.path("output_tokens").asLong() + " tokens";
        if (n.path("cost_usd").isNumber()) {
            double usd = n.path("cost_usd").asDouble();
            // Four decimals, or two significant digits for what would show as $0.0000.
            text += " · $"
                    + (usd == 0 || usd >= 0.0001
                            ? String.format(Locale.ROOT, "%.4f", usd)
                            : new BigDecimal(usd).round(new MathContext(2)).toPlainString());
        }
        double ms = n.path("ms").asDouble();
        return text + " · " + (ms < 1000 ? Math.round(ms) + " ms" : String.format(Locale.ROOT, "%.1f s", ms / 1000));
    }

    private static String count(int n, String one, String many) {
        return n + " " + (n == 1 ? one : many);
    }

    private static String line(String text, int max) {
        return TextRenderer.clip(text.strip().replace("\n", "⏎"), max);
    }
}

package dev.rlmmcp.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.Bytes;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The default reply text, made for a model's context: what the code printed, as printed; an error as
 * a short traceback of the user's code; a one-line footer in brackets with only what changed or
 * matters now; listings as compact tables; refusals as {@code ERROR CODE (argument): message} and
 * the fix. Every other fact stays in the JSON reply ({@code response_format: "json"}).
 */
public final class TextRenderer {

    /** Memory use, in percent of the limit, from which a reply warns (again at each further 10%). */
    static final int MEMORY_WARNING_PERCENT = 50;
    /** A step that ran longer than this says how long it took. */
    static final double SLOW_MS = 2_000;

    static final int PREVIEW_CHARS = 60;
    static final int INFO_PREVIEW_CHARS = 200;
    /** A listing shows a variable's preview only when it is this short: a value, not a clipped sample. */
    private static final int CELL_CHARS = 24;

    private static final Pattern FRAME = Pattern.compile("^(\\s*)File \"<cell \\d+>\", (line \\d+), in (.*)$");
    private static final Pattern CARETS = Pattern.compile("^\\s*[~^]+\\s*$");

    /** What this reply may leave out because the connection already knows it. */
    public record View(boolean showSession, int lastMemoryBand) {
        public static final View FIRST = new View(true, 0);
    }

    private TextRenderer() {}

    public static String render(String tool, ObjectNode reply, View view) {
        String text = rendered(tool, reply, view);
        List<String> ignored = new ArrayList<>();
        names(ignored, "ignored, not arguments of " + tool + ":", reply.path("ignored_arguments"));
        return ignored.isEmpty() ? text : join(text, "[" + ignored.get(0) + "]");
    }

    private static String rendered(String tool, ObjectNode reply, View view) {
        if (reply.path("error").has("code") && !reply.has("status")) {
            return refusal(reply.path("error"));
        }
        if ("suspended".equals(reply.path("status").asText())) {
            return SuspendedText.render(reply);
        }
        if (reply.path("stdout").isTextual() && reply.has("status")) {
            String text = step(reply, view);
            return text.isEmpty() ? "[ok]" : text;
        }
        String text = switch (tool) {
            case "rlm_load_data", "rlm_load_file", "rlm_load_s3", "rlm_load_url" -> loaded(reply, view);
            case "rlm_list_vars" -> variables(reply, view);
            case "rlm_var_info" -> join(variable(reply), footer(reply, view, new ArrayList<>()));
            case "rlm_memory" -> join(memory(reply), footer(reply, view, new ArrayList<>()));
            case "rlm_clear" -> cleared(reply, view);
            case "rlm_init_context" -> initialized(reply);
            case "rlm_sessions" ->
                reply.path("sessions").findValue("limits") == null ? SessionTables.sessions(reply) : generic(reply);
            case "rlm_get_trace" -> reply.has("jsonl") ? SessionTables.export(reply) : SessionTables.trace(reply);
            case "rlm_solve" -> solved(reply);
            case "rlm_get_var" -> value(reply);
            case "rlm_pending" -> SuspendedText.prompt(reply);
            case "rlm_finalize" ->
                "finalized " + reply.path("session_id").asText() + "; answer: "
                        + clip(reply.path("final_answer").asText(), 200);
            case "rlm_delete_session" ->
                "deleted session " + reply.path("session_id").asText();
            default -> generic(reply);
        };
        return text.isEmpty() ? "[ok]" : text;
    }

    /**
     * The answer as the model gave it, then in brackets: the limit that stopped the run (with how to
     * raise it), the figures, and where the trajectory is.
     */
    private static String solved(ObjectNode reply) {
        JsonNode answer = reply.path("answer");
        StringBuilder text = new StringBuilder(answer.isTextual() ? answer.asText() : "(no answer)");
        if (reply.hasNonNull("stopped_by")) {
            newline(text)
                    .append("[stopped by ")
                    .append(reply.path("stopped_by").asText())
                    .append(": ")
                    .append(reply.path("stop_message").asText(""))
                    .append(']');
        }
        JsonNode f = reply.path("figures");
        List<String> items = new ArrayList<>();
        items.add(f.path("iterations").asInt() + " iterations");
        items.add(f.path("children").asInt() + " children");
        items.add("depth " + f.path("depth_reached").asInt());
        items.add(String.format(
                Locale.ROOT,
                "%,d+%,d tokens",
                f.path("input_tokens").asLong(),
                f.path("output_tokens").asLong()));
        if (f.hasNonNull("cost_usd")) {
            items.add(String.format(Locale.ROOT, "$%.4f", f.path("cost_usd").asDouble()));
        }
        if (f.path("cache_hits").asInt() > 0) {
            items.add(f.path("cache_hits").asInt() + " cache hits");
        }
        items.add(String.format(Locale.ROOT, "%.1f s", f.path("elapsed_ms").asLong() / 1000.0));
        items.add("session " + reply.path("session_id").asText());
        if (reply.has("trajectory")) {
            items.add("trajectory: " + reply.path("trajectory").asText());
        }
        newline(text).append('[').append(String.join("; ", items)).append(']');
        return text.toString();
    }

    /** The band a reply's memory use falls in: 0 below the warning, else its tens of percent. */
    public static int memoryBand(ObjectNode reply) {
        JsonNode percent = reply.has("memory") ? reply.path("memory").path("percent") : reply.path("percent");
        double p = percent.asDouble(0);
        return p < MEMORY_WARNING_PERCENT ? 0 : (int) (p / 10);
    }

    static String refusal(JsonNode error) {
        StringBuilder text =
                new StringBuilder("ERROR ").append(error.path("code").asText());
        if (error.hasNonNull("argument")) {
            text.append(" (").append(error.path("argument").asText()).append(')');
        }
        text.append(": ").append(error.path("message").asText());
        if (error.hasNonNull("fix")) {
            text.append("\nfix: ").append(error.path("fix").asText());
        }
        return text.toString();
    }

    private static String step(ObjectNode reply, View view) {
        StringBuilder text = new StringBuilder(reply.path("stdout").asText(""));
        String stderr = reply.path("stderr").asText("");
        if (!stderr.isEmpty()) {
            newline(text).append("[stderr]\n").append(stderr);
        }
        String status = reply.path("status").asText("ok");
        appendFailure(text, reply, status);
        return join(text, footer(reply, view, stepNotes(reply, status)));
    }

    /** Appends, for a step that did not end ok, its traceback and what stopped it. */
    private static void appendFailure(StringBuilder text, ObjectNode reply, String status) {
        JsonNode error = reply.path("error");
        if (status.equals("error") && error.isObject()) {
            newline(text).append(traceback(error));
        } else if (!status.equals("ok")) {
            if (error.has("traceback")) {
                newline(text).append(frames(error.path("traceback").asText()));
            }
            String message = reply.path("message").asText(status);
            newline(text).append(message.startsWith(status) ? message : status + ": " + message);
        }
    }

    /** The footer notes of a step: variables set, deleted, cut, lost or not saved, guardrails, llm_query use. */
    private static List<String> stepNotes(ObjectNode reply, String status) {
        List<String> items = new ArrayList<>();
        names(items, "set", reply.path("variables_changed"));
        names(items, "deleted", reply.path("variables_deleted"));
        JsonNode cut = reply.path("truncated");
        cut.properties()
                .forEach(e ->
                        items.add(e.getKey() + " cut: " + grouped(e.getValue().path("shown_chars"))
                                + " of " + grouped(e.getValue().path("total_chars")) + " chars shown; all in "
                                + e.getValue().path("kept_in").asText()));
        if (reply.path("duration_ms").asDouble() >= SLOW_MS && status.equals("ok")) {
            items.add(String.format(
                    Locale.ROOT, "took %.1f s", reply.path("duration_ms").asDouble() / 1000));
        }
        if (reply.has("guardrail_stop")) {
            items.add("guardrail " + reply.path("guardrail_stop").asText() + ": "
                    + reply.path("guardrail_message").asText(""));
        }
        JsonNode restarted = reply.path("kernel_restarted");
        if (restarted.isObject()) {
            items.add("kernel restarted: " + restarted.path("message").asText());
        } else {
            names(items, "lost", reply.path("lost_variables"));
        }
        reasons(items, "not persisted", reply.path("not_persisted"));
        names(items, "not saved", reply.path("not_saved"));
        JsonNode llm = reply.path("llm_usage");
        if (llm.isObject()) {
            items.add(llmUsage(llm));
        }
        if (reply.hasNonNull("notice")) {
            items.add(reply.path("notice").asText());
        }
        return items;
    }

    /** The step's llm_query use: calls, tokens, and the failed and refused calls if any. */
    private static String llmUsage(JsonNode llm) {
        long tokens =
                llm.path("input_tokens").asLong() + llm.path("output_tokens").asLong();
        return "llm_query " + llm.path("calls").asInt() + " calls"
                + ("agent".equals(llm.path("backend").asText()) ? " answered by you, ~" : ", ") + tokens + " tokens"
                + (llm.path("failed").asInt() > 0 ? ", " + llm.path("failed").asInt() + " failed" : "")
                + (llm.path("refused").asInt() > 0 ? ", " + llm.path("refused").asInt() + " refused" : "");
    }

    /** The traceback without its header line, caret lines and cell file names; the last line is the error. */
    private static String traceback(JsonNode error) {
        String frames = frames(error.path("traceback").asText(""));
        return frames.isEmpty()
                ? error.path("type").asText() + ": " + error.path("message").asText()
                : frames;
    }

    private static String frames(String traceback) {
        StringBuilder out = new StringBuilder();
        for (String line : traceback.split("\n")) {
            if (line.startsWith("Traceback (most recent call last)")
                    || CARETS.matcher(line).matches()
                    || line.startsWith("KeyboardInterrupt")) {
                continue;
            }
            var frame = FRAME.matcher(line);
            out.append(frame.matches() ? frame.group(1) + frame.group(2) + ", in " + frame.group(3) : line)
                    .append('\n');
        }
        return out.toString();
    }

    private static String loaded(ObjectNode reply, View view) {
        StringBuilder text = new StringBuilder(describe(reply));
        String preview = reply.path("preview").asText("");
        if (!reply.has("columns") && !preview.isEmpty()) {
            text.append("\n").append(clip(preview, PREVIEW_CHARS));
        }
        return join(text, footer(reply, view, new ArrayList<>()));
    }

    /** {@code name: type, N items, size; columns: a, b}. */
    private static String describe(JsonNode v) {
        StringBuilder text = new StringBuilder(v.path("name").asText())
                .append(": ")
                .append(v.path("type").asText());
        if (v.has("length")) {
            text.append(", ")
                    .append(grouped(v.path("length")))
                    .append(v.path("type").asText().equals("str") ? " chars" : " items");
        }
        text.append(", ").append(v.path("size_human").asText());
        String status = v.path("status").asText("live");
        if (!status.equals("live")) {
            text.append(", ").append(status);
        }
        if (v.has("columns")) {
            List<String> columns = new ArrayList<>();
            v.path("columns").forEach(c -> columns.add(c.asText()));
            text.append("; columns: ").append(String.join(", ", columns));
        }
        return text.toString();
    }

    private static String variable(ObjectNode reply) {
        StringBuilder text = new StringBuilder(describe(reply));
        if (reply.has("not_persisted")) {
            text.append("; not persisted: ").append(reply.path("not_persisted").asText());
        }
        return text.append('\n')
                .append(clip(reply.path("preview").asText(""), INFO_PREVIEW_CHARS))
                .toString();
    }

    private static String variables(ObjectNode reply, View view) {
        JsonNode vars = reply.path("variables");
        if (vars.isEmpty()) {
            return join("no variables", footer(reply, view, new ArrayList<>()));
        }
        boolean statuses = false;
        for (JsonNode v : vars) {
            statuses |= !v.path("status").asText("live").equals("live");
        }
        SessionTables.Table table = new SessionTables.Table(
                statuses
                        ? List.of("name", "type", "len", "size", "status", "preview")
                        : List.of("name", "type", "len", "size", "preview"));
        for (JsonNode v : vars) {
            List<String> row = new ArrayList<>(List.of(
                    v.path("name").asText(),
                    v.path("type").asText(),
                    v.has("length") ? grouped(v.path("length")) : "",
                    v.path("size_human").asText()));
            if (statuses) {
                row.add(v.path("status").asText());
            }
            String preview = v.path("preview").asText("");
            row.add(preview.length() <= CELL_CHARS && !preview.contains("\n") ? preview : "");
            table.add(row);
        }
        return join(table.toString(), footer(reply, view, new ArrayList<>()));
    }

    private static String memory(ObjectNode reply) {
        String text = reply.path("total_human").asText() + " in "
                + reply.path("variable_count").asInt() + " variable"
                + (reply.path("variable_count").asInt() == 1 ? "" : "s")
                + String.format(
                        Locale.ROOT,
                        " (%.1f%% of %s)",
                        reply.path("percent").asDouble(),
                        reply.path("limit_human").asText());
        if (reply.path("spilled_count").asInt() > 0) {
            text += ", " + reply.path("spilled_count").asInt() + " spilled";
        }
        return reply.has("rss_human")
                ? text + "; kernel RSS " + reply.path("rss_human").asText()
                : text;
    }

    private static String cleared(ObjectNode reply, View view) {
        List<String> names = new ArrayList<>();
        reply.path("cleared").forEach(n -> names.add(n.asText()));
        String what = names.size() > 3 ? names.size() + " variables" : String.join(", ", names);
        String text = names.isEmpty()
                ? "nothing to delete"
                : "deleted " + what + " (" + reply.path("freed_human").asText() + " freed)";
        return join(text, footer(reply, view, new ArrayList<>()));
    }

    private static String initialized(ObjectNode reply) {
        StringBuilder text =
                new StringBuilder("session ").append(reply.path("session_id").asText());
        List<String> limits = new ArrayList<>();
        for (String limit : List.of("max_steps", "max_runtime_ms", "budget_limit", "timeout_s")) {
            JsonNode v = reply.path("limits").path(limit);
            if (!v.isNull() && !v.isMissingNode()) {
                limits.add(limit + " " + v.asText());
            }
        }
        if (!limits.isEmpty()) {
            text.append(" (").append(String.join(", ", limits)).append(')');
        }
        JsonNode context = reply.path("context");
        if (context.isObject()) {
            text.append("\n").append(describe(context));
            if (!context.has("columns")) {
                text.append("\n").append(clip(context.path("preview").asText(""), PREVIEW_CHARS));
            }
        }
        return text.toString();
    }

    private static String value(ObjectNode reply) {
        StringBuilder text = new StringBuilder(reply.path("value").asText(""));
        List<String> items = new ArrayList<>();
        if (!reply.path("type").asText("str").equals("str")) {
            items.add(
                    reply.path("type").asText() + " as " + reply.path("format").asText());
        }
        long offset = reply.path("offset").asLong();
        long total = reply.path("total_chars").asLong();
        long returned = reply.path("returned_chars").asLong();
        if (offset > 0 || offset + returned < total) {
            items.add("chars " + offset + "-" + (offset + returned) + " of " + total
                    + (reply.hasNonNull("next_offset")
                            ? "; next: offset=" + reply.path("next_offset").asText()
                            : ""));
        }
        if (!items.isEmpty()) {
            newline(text).append('[').append(String.join("; ", items)).append(']');
        }
        return text.toString();
    }

    /** Any other reply: its facts as {@code key: value} lines, as Markdown writes them, without a title. */
    private static String generic(ObjectNode reply) {
        String md = MarkdownRenderer.render("", reply);
        return md.substring(md.indexOf('\n') + 1).stripTrailing();
    }

    /**
     * The footer line: the given items, what is still being written or was lost at the server's last
     * stop, then the session id, eviction and memory warning when they matter.
     */
    private static String footer(ObjectNode reply, View view, List<String> items) {
        names(items, "still being written:", reply.path("still_writing"));
        names(items, "lost when the server stopped, still being written then:", reply.path("lost_at_stop"));
        if (reply.hasNonNull("memory_note")) {
            items.add(reply.path("memory_note").asText());
        } else {
            JsonNode evicted = reply.path("evicted");
            List<String> names = new ArrayList<>();
            evicted.forEach(v -> names.add(v.path("name").asText()));
            if (!names.isEmpty()) {
                items.add("evicted " + String.join(", ", names));
            }
        }
        int band = memoryBand(reply);
        if (band > 0 && band != view.lastMemoryBand() && reply.has("memory")) {
            JsonNode m = reply.path("memory");
            items.add(String.format(
                    Locale.ROOT,
                    "memory %.0f%% of %s",
                    m.path("percent").asDouble(),
                    Bytes.human(m.path("limit_bytes").asLong())));
        }
        if (view.showSession() && reply.hasNonNull("session_id")) {
            items.add("session " + reply.path("session_id").asText());
        }
        return items.isEmpty() ? "" : "[" + String.join("; ", items) + "]";
    }

    /** The text, then the footer on a line of its own. */
    private static String join(CharSequence text, String footer) {
        if (footer.isEmpty() || text.isEmpty()) {
            return text + footer;
        }
        return text + (text.charAt(text.length() - 1) == '\n' ? "" : "\n") + footer;
    }

    private static void names(List<String> items, String label, JsonNode names) {
        if (names.isArray() && !names.isEmpty()) {
            List<String> all = new ArrayList<>();
            names.forEach(n -> all.add(n.asText()));
            items.add(label + " " + String.join(", ", all));
        }
    }

    private static void reasons(List<String> items, String label, JsonNode reasons) {
        if (reasons.isObject() && !reasons.isEmpty()) {
            List<String> all = new ArrayList<>();
            reasons.properties()
                    .forEach(e -> all.add(e.getKey() + " (" + e.getValue().asText() + ")"));
            items.add(label + " " + String.join(", ", all));
        }
    }

    private static StringBuilder newline(StringBuilder text) {
        if (!text.isEmpty() && text.charAt(text.length() - 1) != '\n') {
            text.append('\n');
        }
        return text;
    }

    static String clip(String text, int max) {
        return text.length() <= max ? text : text.substring(0, max - 1) + "…";
    }

    private static String grouped(JsonNode number) {
        return String.format(Locale.ROOT, "%,d", number.asLong());
    }
}

package dev.rlmmcp.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.Bytes;
import java.util.ArrayList;
import java.util.List;

/** The text of the session listings, rlm_sessions and rlm_get_trace: a header line and a compact table. */
final class SessionTables {

    private SessionTables() {}

    static String sessions(ObjectNode reply) {
        boolean cluster = reply.path("sessions").findValue("owner_node") != null;
        List<String> header = new ArrayList<>(List.of("session_id", "name", "state", "steps", "memory", "last_active"));
        if (cluster) {
            header.add("owner");
        }
        Table table = new Table(header);
        for (JsonNode s : reply.path("sessions")) {
            String state = s.path("state").asText()
                    + (s.has("guardrail_stop") ? " (" + s.path("guardrail_stop").asText() + ")" : "");
            List<String> row = new ArrayList<>(List.of(
                    s.path("session_id").asText(),
                    s.path("name").asText(),
                    state,
                    s.path("steps").asText(),
                    s.path("memory").asText(),
                    time(s.path("last_active").asText())));
            if (cluster) {
                row.add(s.path("owner_node").asText("this node") + (s.has("owner_gone") ? " (gone)" : ""));
            }
            table.add(row);
        }
        String text = reply.path("count").asInt() + " of " + reply.path("total").asInt() + " sessions\n" + table;
        return reply.has("next_offset") ? text + "\n[" + reply.path("next").asText() + "]" : text;
    }

    static String trace(ObjectNode reply) {
        StringBuilder text = new StringBuilder(reply.path("session_id").asText())
                .append(' ')
                .append(reply.path("name").asText())
                .append(": ")
                .append(reply.path("state").asText())
                .append(", entries ")
                .append(reply.path("start").asInt())
                .append('-')
                .append(reply.path("end").asInt())
                .append(" of ")
                .append(reply.path("trace_length").asInt())
                .append(", runtime ")
                .append(reply.path("runtime_ms").asLong())
                .append(" ms, io ")
                .append(Bytes.human(reply.path("io_bytes").asLong()));
        if (reply.path("llm_calls").asInt() > 0) {
            text.append(", llm_query ").append(reply.path("llm_calls").asInt()).append(" calls");
        }
        if (reply.hasNonNull("final_answer")) {
            text.append("\nfinal answer: ")
                    .append(TextRenderer.clip(reply.path("final_answer").asText(), 200));
        }
        Table table = new Table(List.of("#", "kind", "status", "ms", "input", "output"));
        for (JsonNode s : reply.path("steps")) {
            String status = s.path("status").asText()
                    + (s.has("guardrail_events") || s.has("guardrail_stop")
                            ? " "
                                    + s.path("guardrail_stop")
                                            .asText(s.path("guardrail_events").toString())
                            : "");
            table.add(List.of(
                    s.path("index").asText(),
                    s.path("kind").asText(),
                    status,
                    String.valueOf(Math.round(s.path("duration_ms").asDouble())),
                    cell(s.path("input").asText(""), 40),
                    cell(s.path("output").asText(""), 40)));
        }
        text.append('\n').append(table);
        for (JsonNode s : reply.path("steps")) {
            String tree = RlmTreeText.of(s);
            if (!tree.isEmpty()) {
                text.append("\n\n").append(tree.stripTrailing());
            }
        }
        return text.toString();
    }

    /** A page of an RLM run exported as JSONL, and where it is in the whole when it is not all of it. */
    static String export(ObjectNode reply) {
        StringBuilder text = new StringBuilder(reply.path("jsonl").asText(""));
        long offset = reply.path("offset").asLong();
        long total = reply.path("total_chars").asLong();
        long returned = reply.path("returned_chars").asLong();
        if (offset > 0 || offset + returned < total) {
            // Always on a line of its own after the page, so that pages joined up are the file itself.
            text.append("\n[entry ")
                    .append(reply.path("entry").asText())
                    .append(" as ")
                    .append(reply.path("format").asText())
                    .append(": chars ")
                    .append(offset)
                    .append('-')
                    .append(offset + returned)
                    .append(" of ")
                    .append(total)
                    .append(
                            reply.hasNonNull("next_offset")
                                    ? "; next: offset="
                                            + reply.path("next_offset").asText()
                                    : "")
                    .append(']');
        }
        return text.toString();
    }

    private static String cell(String text, int max) {
        return TextRenderer.clip(text.replace("\n", "⏎").replace("|", "¦"), max);
    }

    /** An ISO instant to the second, e.g. 2026-11-24T17:50:47Z. */
    private static String time(String instant) {
        int dot = instant.indexOf('.');
        return dot > 0 ? instant.substring(0, dot) + "Z" : instant;
    }

    /** Rows as {@code a | b | c} lines under a header. */
    static final class Table {
        private final StringBuilder text = new StringBuilder();

        Table(List<String> header) {
            add(header);
        }

        void add(List<String> row) {
            if (!text.isEmpty()) {
                text.append('\n');
            }
            text.append(String.join(" | ", row));
        }

        @Override
        public String toString() {
            return text.toString();
        }
    }
}

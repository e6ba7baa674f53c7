package dev.rlmmcp.core;

import dev.rlmmcp.base.Text;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.store.SessionDatabase;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** A session's trace: its last {@link #KEPT} entries, numbered from the session's first. */
final class Trace {

    static final int KEPT = SessionDatabase.TRACE_KEPT;
    private static final int TEXT = 2000;

    private final ObjectMapper json;
    private final Deque<Step> kept = new ArrayDeque<>();
    private int length;

    Trace(ObjectMapper json) {
        this.json = json;
    }

    synchronized int length() {
        return length;
    }

    /** Entries read back from the store; {@code recordedLength} is the length the session's record gives. */
    synchronized void restore(List<Step> entries, int recordedLength) {
        kept.addAll(entries);
        length = Math.max(recordedLength, kept.isEmpty() ? 0 : kept.getLast().index() + 1);
    }

    /** Adds the entry for a finished step or load, whose reply is {@code body}. */
    synchronized Step append(Integer step, String kind, String input, ObjectNode body, double ms, long io,
            String tripped, long memoryBytes, JsonNode llmCalls) {
        List<String> changed = new ArrayList<>();
        body.path("variables_changed").forEach(v -> changed.add(v.asText()));
        if (body.has("name") && "load".equals(kind)) {
            changed.add(body.path("name").asText());
        }
        String status = body.path("status").asText(kind.equals("exec") ? "ok" : "done");
        Step entry = new Step(length, step, kind, Instant.now(), Text.clip(input, TEXT), status,
                Text.clip(outputSummary(body), TEXT), List.copyOf(changed), Math.round(ms * 1000) / 1000.0,
                io, tripped, memoryBytes, body.get("llm_usage"), llmCalls);
        if (kept.size() == KEPT) {
            kept.removeFirst();
        }
        kept.addLast(entry);
        length++;
        return entry;
    }

    /** Adds entries [start, end) to {@code body}, with where they are in the whole trace. */
    synchronized void slice(ObjectNode body, int start, int end) {
        int first = length - kept.size();
        int from = Math.min(Math.max(first, start), length);
        int to = Math.min(Math.max(from, end), length);
        body.put("trace_length", length);
        if (first > 0) {
            body.put("trace_dropped", first);
            body.put("trace_note", "only the last " + KEPT + " entries are kept; entries before "
                    + first + " were dropped");
        }
        body.put("start", from);
        body.put("end", to);
        body.set("steps", json.valueToTree(kept.stream().skip(from - first).limit(to - from)
                .map(SessionRecords::view).toList()));
    }

    /** The names of the variables the kept entries changed, in order of first change. */
    synchronized Set<String> variableNames() {
        Set<String> names = new LinkedHashSet<>();
        kept.forEach(s -> names.addAll(s.variablesChanged()));
        return names;
    }

    private static String outputSummary(ObjectNode body) {
        StringBuilder out = new StringBuilder(body.path("stdout").asText(""));
        JsonNode error = body.path("error");
        if (error.isObject()) {
            out.append(out.isEmpty() ? "" : "\n").append(error.path("type").asText()).append(": ")
                    .append(error.path("message").asText());
        }
        if (body.has("message")) {
            out.append(out.isEmpty() ? "" : "\n").append(body.path("message").asText());
        }
        if (out.isEmpty() && body.has("type")) {
            out.append(body.path("type").asText()).append(", ").append(body.path("size_human").asText());
        }
        return out.toString();
    }
}

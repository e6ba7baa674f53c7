package dev.rlmmcp.core;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.base.Text;
import dev.rlmmcp.store.SessionDatabase;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** A session's trace: its last {@link #KEPT} entries, numbered from the session's first. */
final class Trace {

    static final int KEPT = SessionDatabase.TRACE_KEPT;
    private static final int TEXT = 2000;

    private final Deque<Step> kept = new ArrayDeque<>();
    private int length;

    synchronized int length() {
        return length;
    }

    /** Entries read back from the store; {@code recordedLength} is the length the session's record gives. */
    synchronized void restore(List<Step> entries, int recordedLength) {
        kept.addAll(entries);
        length = Math.max(recordedLength, kept.isEmpty() ? 0 : kept.getLast().index() + 1);
    }

    /** Adds the entry for a finished step or load. */
    synchronized Step append(Integer step, String kind, String input, String status, String output,
            List<String> changed, double ms, long io, String tripped, long memoryBytes, JsonNode llmUsage,
            JsonNode llmCalls) {
        Step entry = new Step(length, step, kind, Instant.now(), Text.clip(input, TEXT), status,
                Text.clip(output, TEXT), List.copyOf(changed), Math.round(ms * 1000) / 1000.0, io, tripped,
                memoryBytes, llmUsage, llmCalls);
        if (kept.size() == KEPT) {
            kept.removeFirst();
        }
        kept.addLast(entry);
        length++;
        return entry;
    }

    /** Entries [start, end), with where they are in the whole trace. */
    synchronized TraceView view(SessionSummary summary, int start, int end, String finalAnswer) {
        int first = length - kept.size();
        int from = Math.min(Math.max(first, start), length);
        int to = Math.min(Math.max(from, end), length);
        return new TraceView(summary, length, first > 0 ? first : null, first > 0 ? "only the last " + KEPT
                + " entries are kept; entries before " + first + " were dropped" : null, from, to,
                kept.stream().skip(from - first).limit(to - from).map(SessionRecords::view).toList(), finalAnswer);
    }

    /** The names of the variables the kept entries changed, in order of first change. */
    synchronized Set<String> variableNames() {
        Set<String> names = new LinkedHashSet<>();
        kept.forEach(s -> names.addAll(s.variablesChanged()));
        return names;
    }
}

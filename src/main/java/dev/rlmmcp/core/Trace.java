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
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session's trace: its last {@link #KEPT} entries, numbered from the session's first. A restored
 * session's entries stay in the store until the trace is first used: a restart reads no trace, and
 * holds none of the sessions nobody comes back to.
 */
final class Trace {

    private static final Logger log = LoggerFactory.getLogger(Trace.class);
    static final int KEPT = SessionDatabase.TRACE_KEPT;
    private static final int TEXT = 2000;

    private final Deque<Step> kept = new ArrayDeque<>();
    private int length;
    private Supplier<List<Step>> unread;

    /** The length the session's record gives until the entries are read (the store writes both together). */
    synchronized int length() {
        return length;
    }

    /** A restored session's entries, read from the store when first wanted; {@code recordedLength} is its record's. */
    synchronized void restore(Supplier<List<Step>> entries, int recordedLength) {
        unread = entries;
        length = recordedLength;
    }

    /** Reads the restored entries, if not yet read; a store that fails here costs the old entries, never the session. */
    private void read() {
        Supplier<List<Step>> entries = unread;
        if (entries == null) {
            return;
        }
        unread = null;
        try {
            List<Step> read = entries.get();
            kept.addAll(read.subList(Math.max(0, read.size() - KEPT), read.size()));
            length = Math.max(length, kept.isEmpty() ? 0 : kept.getLast().index() + 1);
        } catch (RuntimeException e) {
            log.warn("the trace entries before step {} could not be read back: {}", length, e.toString());
        }
    }

    /** Adds the entry for a finished step or load. */
    synchronized Step append(
            Integer step,
            String kind,
            String input,
            String status,
            String output,
            List<String> changed,
            double ms,
            long io,
            String tripped,
            long memoryBytes,
            JsonNode llmUsage,
            JsonNode llmCalls,
            JsonNode rlm) {
        read();
        Step entry = new Step(
                length,
                step,
                kind,
                Instant.now(),
                Text.clip(input, TEXT),
                status,
                Text.clip(output, TEXT),
                List.copyOf(changed),
                Math.round(ms * 1000) / 1000.0,
                io,
                tripped,
                memoryBytes,
                llmUsage,
                llmCalls,
                rlm);
        if (kept.size() == KEPT) {
            kept.removeFirst();
        }
        kept.addLast(entry);
        length++;
        return entry;
    }

    /** Entries [start, end), with where they are in the whole trace. */
    synchronized TraceView view(SessionSummary summary, int start, int end, String finalAnswer) {
        read();
        int first = length - kept.size();
        int from = Math.min(Math.max(first, start), length);
        int to = Math.min(Math.max(from, end), length);
        return new TraceView(
                summary,
                length,
                first > 0 ? first : null,
                first > 0
                        ? "only the last " + KEPT + " entries are kept; entries before " + first + " were dropped"
                        : null,
                from,
                to,
                kept.stream()
                        .skip(from - first)
                        .limit(to - from)
                        .map(SessionRecords::view)
                        .toList(),
                finalAnswer);
    }

    /** The names of the variables the kept entries changed, in order of first change. */
    synchronized Set<String> variableNames() {
        read();
        Set<String> names = new LinkedHashSet<>();
        kept.forEach(s -> names.addAll(s.variablesChanged()));
        return names;
    }
}

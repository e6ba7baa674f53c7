package dev.rlmmcp.core;

import java.util.List;
import java.util.Map;

/**
 * Trace entries [start, end) of a session, with its totals: {@code traceDropped} entries before the
 * kept ones are gone ({@code traceNote} says so); {@code finalAnswer} once finalized.
 */
public record TraceView(
        SessionSummary summary,
        int traceLength,
        Integer traceDropped,
        String traceNote,
        int start,
        int end,
        List<Map<String, Object>> steps,
        String finalAnswer) {}

package dev.rlmmcp.core;

import java.util.List;

/**
 * A session's variables for someone watching: {@code source} kernel (asked just now), last_seen (as
 * its kernel last listed them, {@code asOf}) or trace (names only); {@code note} says why not asked.
 */
public record VariablesView(
        String sessionId, boolean kernelRunning, String source, String note, String asOf, List<Variable> variables) {}

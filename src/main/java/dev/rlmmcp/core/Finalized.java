package dev.rlmmcp.core;

/** A finalized session and its answer. */
public record Finalized(SessionSummary summary, String finalAnswer) {}

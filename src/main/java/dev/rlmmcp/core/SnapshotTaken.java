package dev.rlmmcp.core;

import java.util.List;

/** The account of a snapshot: when, how many bytes, how long, which variables, and its copy to the store. */
public record SnapshotTaken(
        String at, long bytesWritten, double durationMs, List<String> written, Double storedMs, String storeError) {}

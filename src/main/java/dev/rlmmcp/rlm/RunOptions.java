package dev.rlmmcp.rlm;

/** What a caller chose for one root run: the model (null: the backend's default) and its limits. */
public record RunOptions(String model, RunLimits limits) {}

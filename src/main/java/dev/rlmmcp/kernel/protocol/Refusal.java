package dev.rlmmcp.kernel.protocol;

/** The harness refused a request: an error code, a message, and the argument at fault (or null). */
public record Refusal(String code, String message, String argument) {}

package dev.rlmmcp.data;

/** A download streamed into a kernel: where from, how many bytes, how long and how fast. */
public record Transfer(String source, long sourceBytes, double transferMs, double mbPerS) {}

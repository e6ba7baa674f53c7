package dev.rlmmcp.core;

/** A kernel's memory use, with the sandbox it runs in and the interpreter (null where not known yet). */
public record MemoryReport(MemoryUsage use, String sandbox, String python, String pythonVersion) {}

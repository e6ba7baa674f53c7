package dev.rlmmcp.core;

import dev.rlmmcp.kernel.protocol.MemoryUse;

/** A kernel's memory use, with the sandbox it runs in and the interpreter (null where not known yet). */
public record MemoryReport(MemoryUse use, String sandbox, String python, String pythonVersion) {
}

package dev.rlmmcp.core;

import dev.rlmmcp.llm.LlmLimits;
import java.time.Instant;

/** A session as stored: everything but its trace and its variables. */
record SessionRecord(
        String id,
        String name,
        Instant created,
        Instant lastActive,
        SessionState state,
        String stoppedBy,
        String finalAnswer,
        int steps,
        long runtimeMs,
        long ioBytes,
        int traceLength,
        int kernelRestarts,
        Instant snapshotAt,
        Limits limits,
        LlmLimits llmLimits) {}

package dev.rlmmcp.core;

import com.fasterxml.jackson.annotation.JsonIgnore;
import dev.rlmmcp.base.Bytes;
import dev.rlmmcp.llm.LlmLimits;
import java.time.Duration;

/**
 * What rlm_sessions and rlm_get_trace show of a session: its record, with the figures only a live
 * session has. {@code snapshotAt} and {@code lastSnapshot} only with a store ({@code persisted}); a
 * null snapshotAt then says no snapshot was taken yet.
 */
public record SessionSummary(
        String sessionId,
        String name,
        String state,
        String guardrailStop,
        int steps,
        long runtimeMs,
        long ioBytes,
        int llmCalls,
        long llmTokens,
        long memoryBytes,
        String memoryHuman,
        boolean kernelRunning,
        String snapshotAt,
        SnapshotTaken lastSnapshot,
        String created,
        String lastActive,
        LimitsView limits,
        @JsonIgnore boolean persisted) {

    /** The limits a session runs under, as a caller names them. */
    public record LimitsView(
            Integer maxSteps,
            Long maxRuntimeMs,
            Long budgetLimit,
            long timeoutS,
            Integer llmMaxCalls,
            Integer llmMaxCallsPerStep,
            int llmMaxConcurrency,
            int llmMaxPromptChars,
            Long llmTokenBudget,
            long llmTimeoutS,
            int llmMaxDepth) {}

    static SessionSummary of(
            SessionRecord session,
            int llmCalls,
            long llmTokens,
            long memoryBytes,
            boolean kernelRunning,
            boolean persisted,
            SnapshotTaken lastSnapshot,
            Duration defaultTimeout) {
        return new SessionSummary(
                session.id(),
                session.name(),
                session.state().wireName(),
                session.stoppedBy(),
                session.steps(),
                session.runtimeMs(),
                session.ioBytes(),
                llmCalls,
                llmTokens,
                memoryBytes,
                Bytes.human(memoryBytes),
                kernelRunning,
                persisted && session.snapshotAt() != null ? session.snapshotAt().toString() : null,
                persisted ? lastSnapshot : null,
                session.created().toString(),
                session.lastActive().toString(),
                limits(session.limits(), session.llmLimits(), defaultTimeout),
                persisted);
    }

    private static LimitsView limits(Limits limits, LlmLimits llm, Duration defaultTimeout) {
        return new LimitsView(
                limits.maxSteps(),
                limits.maxRuntimeMs(),
                limits.budgetBytes(),
                (limits.stepTimeout() == null ? defaultTimeout : limits.stepTimeout()).toSeconds(),
                llm.maxCalls(),
                llm.maxCallsPerStep(),
                llm.maxConcurrent(),
                llm.maxPromptChars(),
                llm.tokenBudget(),
                llm.callTimeout().toSeconds(),
                llm.maxDepth());
    }
}

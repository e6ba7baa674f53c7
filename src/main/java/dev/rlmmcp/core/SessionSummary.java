package dev.rlmmcp.core;

import dev.rlmmcp.base.Bytes;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.llm.LlmLimits;
import java.time.Duration;

/** What rlm_sessions and rlm_get_trace show of a session: its record, with the figures only a live session has. */
final class SessionSummary {

    private SessionSummary() {
    }

    /**
     * {@code persisted} says the session has a store, whose last snapshot is {@code lastSnapshot}
     * (null if none was taken since the server started).
     */
    static ObjectNode of(ObjectMapper json, SessionRecord session, int llmCalls, long llmTokens, long memoryBytes,
            boolean kernelRunning, boolean persisted, ObjectNode lastSnapshot, Duration defaultTimeout) {
        ObjectNode body = json.createObjectNode();
        body.put("session_id", session.id());
        body.put("name", session.name());
        body.put("state", session.state().wireName());
        if (session.stoppedBy() != null) {
            body.put("guardrail_stop", session.stoppedBy());
        }
        body.put("steps", session.steps());
        body.put("runtime_ms", session.runtimeMs());
        body.put("io_bytes", session.ioBytes());
        body.put("llm_calls", llmCalls);
        body.put("llm_tokens", llmTokens);
        body.put("memory_bytes", memoryBytes);
        body.put("memory_human", Bytes.human(memoryBytes));
        body.put("kernel_running", kernelRunning);
        if (persisted) {
            body.put("snapshot_at", session.snapshotAt() == null ? null : session.snapshotAt().toString());
            if (lastSnapshot != null) {
                body.set("last_snapshot", lastSnapshot);
            }
        }
        body.put("created", session.created().toString());
        body.put("last_active", session.lastActive().toString());
        body.set("limits", limits(json, session.limits(), session.llmLimits(), defaultTimeout));
        return body;
    }

    private static ObjectNode limits(ObjectMapper json, Limits limits, LlmLimits llmLimits, Duration defaultTimeout) {
        ObjectNode view = json.createObjectNode();
        view.put("max_steps", limits.maxSteps());
        view.put("max_runtime_ms", limits.maxRuntimeMs());
        view.put("budget_limit", limits.budgetBytes());
        view.put("timeout_s", (limits.stepTimeout() == null ? defaultTimeout : limits.stepTimeout()).toSeconds());
        view.put("llm_max_calls", llmLimits.maxCalls());
        view.put("llm_max_calls_per_step", llmLimits.maxCallsPerStep());
        view.put("llm_max_concurrency", llmLimits.maxConcurrent());
        view.put("llm_max_prompt_chars", llmLimits.maxPromptChars());
        view.put("llm_token_budget", llmLimits.tokenBudget());
        view.put("llm_timeout_s", llmLimits.callTimeout().toSeconds());
        view.put("llm_max_depth", llmLimits.maxDepth());
        return view;
    }
}

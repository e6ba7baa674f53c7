package dev.rlmmcp.core;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.llm.LlmLimits;
import java.time.Duration;

/** A session's limits as rlm_sessions and rlm_get_trace show them. */
final class LimitsView {

    private LimitsView() {
    }

    static ObjectNode of(ObjectMapper json, Limits limits, LlmLimits llmLimits, Duration defaultTimeout) {
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

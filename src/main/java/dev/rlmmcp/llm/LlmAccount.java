package dev.rlmmcp.llm;

/**
 * A session's sub-LLM totals against its {@link LlmLimits}: calls admitted and tokens used, over
 * all its steps. Thread-safe: a step's calls run in parallel.
 */
public final class LlmAccount {

    private final LlmLimits limits;
    private int calls;
    private long tokens;

    public LlmAccount(LlmLimits limits) {
        this.limits = limits;
    }

    public LlmLimits limits() {
        return limits;
    }

    public synchronized int calls() {
        return calls;
    }

    public synchronized long tokens() {
        return tokens;
    }

    /** Admits n more calls, or says which session limit forbids them. */
    synchronized void admit(int n) throws LlmException {
        if (limits.maxCalls() != null && calls + n > limits.maxCalls()) {
            throw new LlmException(
                    "LIMIT_EXCEEDED",
                    "llm_max_calls",
                    "this session may make %d sub-LLM calls in total (llm_max_calls); %d made, %d more asked"
                            .formatted(limits.maxCalls(), calls, n));
        }
        if (limits.tokenBudget() != null && tokens >= limits.tokenBudget()) {
            throw new LlmException(
                    "LIMIT_EXCEEDED",
                    "llm_token_budget",
                    "this session's sub-LLM token budget (llm_token_budget %d) is spent: %d tokens used"
                            .formatted(limits.tokenBudget(), tokens));
        }
        calls += n;
    }

    synchronized void used(long n) {
        tokens += n;
    }
}

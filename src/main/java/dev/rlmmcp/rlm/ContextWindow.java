package dev.rlmmcp.rlm;

import dev.rlmmcp.llm.LlmException;
import dev.rlmmcp.llm.LlmRequest;

/**
 * The model's context window as a limit: a request whose prompt cannot fit is refused before it is
 * sent, since the provider would only refuse it too (and a retry would be refused alike). A prompt's
 * tokens are estimated at four characters a token, the system prompt included, as everywhere a run
 * counts tokens before the provider does.
 */
final class ContextWindow {

    /** The guardrail a refusal names. */
    static final String LIMIT = "llm_context_window";

    private ContextWindow() {}

    /** The tokens {@code request} is reckoned to take before it is sent. */
    static long estimate(LlmRequest request) {
        return (request.chars() + 3L) / 4;
    }

    /** Refuses {@code request} with PROMPT_TOO_LARGE, naming the window, if it cannot fit {@code model}'s window. */
    static void check(RlmConfig config, LlmRequest request, String model) throws LlmException {
        int window = config.window(model);
        long tokens = estimate(request);
        if (tokens > window) {
            String option = model != null && config.windows().containsKey(model)
                    ? "--llm-context-windows gives " + model + " this window"
                    : "--llm-context-window, for each model --llm-context-windows";
            throw new LlmException(
                    "PROMPT_TOO_LARGE",
                    LIMIT,
                    ("the prompt is about %d tokens (%d characters with the system prompt, at four a token), more than "
                                    + "the model's context window of %d tokens (%s): nothing was sent. Send a smaller "
                                    + "prompt (a slice of the data, or pass it as rlm_query's context), or raise the "
                                    + "window where the model's is larger")
                            .formatted(tokens, request.chars(), window, option));
        }
    }
}

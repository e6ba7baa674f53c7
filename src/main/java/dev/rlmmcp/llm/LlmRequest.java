package dev.rlmmcp.llm;

import java.util.List;

/**
 * One sub-LLM call: the conversation (one user message for llm_query; the turns so far for an RLM's
 * loop), and optionally a system prompt, an output cap and a model name or hint.
 */
public record LlmRequest(List<LlmMessage> messages, String system, Integer maxTokens, String model) {

    public LlmRequest {
        messages = List.copyOf(messages);
        if (messages.isEmpty()) {
            throw new IllegalArgumentException("a request has at least one message");
        }
    }

    /** A single prompt, as llm_query sends it. */
    public LlmRequest(String prompt, String system, Integer maxTokens, String model) {
        this(List.of(LlmMessage.user(prompt)), system, maxTokens, model);
    }

    /** The last message's text: the prompt of a single-prompt call. */
    public String prompt() {
        return messages.getLast().content();
    }

    /** Characters sent: what the prompt-size limit counts. */
    public int chars() {
        int n = system == null ? 0 : system.length();
        for (LlmMessage m : messages) {
            n += m.content().length();
        }
        return n;
    }
}

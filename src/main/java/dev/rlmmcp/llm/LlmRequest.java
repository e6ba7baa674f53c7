package dev.rlmmcp.llm;

/** One sub-LLM call: the prompt, and optionally a system prompt, an output cap and a model name or hint. */
public record LlmRequest(String prompt, String system, Integer maxTokens, String model) {

    /** Characters sent: what the prompt-size limit counts. */
    int chars() {
        return prompt.length() + (system == null ? 0 : system.length());
    }
}

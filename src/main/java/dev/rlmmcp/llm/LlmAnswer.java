package dev.rlmmcp.llm;

/** A sub-LLM's answer; token counts are null where the backend does not report them. */
public record LlmAnswer(String text, Long inputTokens, Long outputTokens, String model) {}

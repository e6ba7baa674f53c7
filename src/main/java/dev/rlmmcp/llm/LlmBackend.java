package dev.rlmmcp.llm;

import java.time.Duration;

/**
 * Where sub-LLM calls go: an OpenAI-compatible API, or the MCP client itself through sampling (that
 * one is implemented where the MCP exchange is, and handed down per call). Implementations are
 * called from many threads at once and should stop when their thread is interrupted.
 */
public interface LlmBackend {

    /** "openai" or "sampling": shown in usage and errors. */
    String name();

    LlmAnswer complete(LlmRequest request, Duration timeout) throws LlmException, InterruptedException;
}

package dev.rlmmcp.tools;

import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.llm.LlmBackend;

/**
 * Who is calling: the client connection, whose default session a call without session_id uses, that
 * client's MCP sampling for llm_query (null if it declared no sampling capability), and the request
 * being served (its cancellation and progress).
 */
public record Caller(String connection, LlmBackend sampling, CallContext context) {

    public Caller(String connection) {
        this(connection, null, CallContext.NONE);
    }

    public Caller(String connection, LlmBackend sampling) {
        this(connection, sampling, CallContext.NONE);
    }
}

package dev.rlmmcp.tools;

import dev.rlmmcp.llm.LlmBackend;

/**
 * Who is calling: the client connection, whose default session a call without session_id uses, and
 * that client's MCP sampling for llm_query (null if it declared no sampling capability).
 */
public record Caller(String connection, LlmBackend sampling) {

    public Caller(String connection) {
        this(connection, null);
    }
}

package dev.rlmmcp.rlm;

import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.llm.LlmBackend;

/**
 * RLM runs: the root loop of rlm_solve and {@code rlm-mcp ask}, and the child RLMs that rlm_query
 * starts from any session's code. Every run, with its children, is kept in its session's trace.
 */
public final class RlmRuns {

    private final Sessions sessions;
    private final RlmConfig config;

    public RlmRuns(Sessions sessions, RlmConfig config) {
        this.sessions = sessions;
        this.config = config;
    }

    public RlmConfig config() {
        return config;
    }

    /**
     * Runs the RLM loop on {@code question} with {@code session} as the root RLM's REPL (its variables,
     * {@code context} among them if it has one, are what the model works on), until the model answers or
     * a limit stops it. Cancelling {@code context} stops the run and every child within a second. The
     * run's trajectory is appended to the session's trace as an entry of kind "rlm".
     *
     * @param clientSampling the calling client's MCP sampling (null if none): the backend when the
     *                       server's LLM mode picks it, as for llm_query
     */
    public RunOutcome solve(Session session, String question, RunOptions options, LlmBackend clientSampling,
            RunProgress progress, CallContext context) {
        throw new UnsupportedOperationException("the RLM loop is being built");
    }
}

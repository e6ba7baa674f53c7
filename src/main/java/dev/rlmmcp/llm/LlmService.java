package dev.rlmmcp.llm;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.Locale;

/**
 * Sub-LLM calls for llm_query: which backend a step uses, and the limits sessions start with. The
 * mode decides: {@code auto} uses the OpenAI-compatible API when one is configured, else the calling
 * client's MCP sampling when it declared that capability, else the calling agent itself ({@code
 * agent}: the step suspends and the agent answers its sub-calls with tool calls); {@code sampling},
 * {@code openai} and {@code agent} use only that one; {@code off} refuses every call.
 */
public final class LlmService {

    public enum Mode {
        AUTO,
        SAMPLING,
        OPENAI,
        AGENT,
        OFF;

        public static Mode of(String name) {
            try {
                return valueOf(name.strip().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "unknown llm backend '" + name + "': use auto, sampling, openai, agent or off");
            }
        }
    }

    private final Mode mode;
    private final LlmBackend api;
    private final LlmLimits defaults;
    private final ObjectMapper json;
    private final Duration agentWait;

    /** {@code api} is the OpenAI-compatible backend, or null when none is configured. */
    public LlmService(Mode mode, LlmBackend api, LlmLimits defaults, ObjectMapper json) {
        this(mode, api, defaults, json, DEFAULT_AGENT_WAIT);
    }

    /** {@code agentWait}: how long a step suspended for the agent's answers waits for each before it gives up. */
    public LlmService(Mode mode, LlmBackend api, LlmLimits defaults, ObjectMapper json, Duration agentWait) {
        if (mode == Mode.OPENAI && api == null) {
            throw new IllegalArgumentException("--llm-backend openai needs --llm-base-url / RLM_LLM_BASE_URL");
        }
        this.mode = mode;
        this.api = api;
        this.defaults = defaults;
        this.json = json;
        this.agentWait = agentWait;
    }

    /** Where a loop that needs a model of its own (rlm_solve) gets one. */
    public enum SolverModel {
        /** The configured model API: every client's calls have it. */
        API,
        /** The client's, through MCP sampling: only a client that samples has one. */
        CLIENT_SAMPLING,
        /** Nowhere: the agent answers every sub-call (agent mode), or they are switched off. */
        NONE
    }

    /** Where rlm_solve's model comes from on this server. */
    public SolverModel solverModel() {
        return switch (mode) {
            case OFF, AGENT -> SolverModel.NONE;
            case OPENAI -> SolverModel.API;
            case SAMPLING -> SolverModel.CLIENT_SAMPLING;
            case AUTO -> api != null ? SolverModel.API : SolverModel.CLIENT_SAMPLING;
        };
    }

    /** How long a suspended step waits for the agent's answer to each of its sub-calls, by default. */
    public static final Duration DEFAULT_AGENT_WAIT = Duration.ofMinutes(15);

    /**
     * Whether the calling agent answers this caller's sub-calls itself ({@code clientSampling} may be null):
     * {@code agent} mode, or {@code auto} with neither an API nor a client that samples.
     */
    public boolean agentAnswers(LlmBackend clientSampling) {
        return mode == Mode.AGENT || (mode == Mode.AUTO && api == null && clientSampling == null);
    }

    /** A backend that hands sub-calls to the agent through {@code calls}. */
    public AgentBackend agent(PendingCalls calls) {
        return new AgentBackend(calls, agentWait);
    }

    /** No configured API; sampling when the client offers it. */
    public static LlmService samplingOnly(ObjectMapper json) {
        return new LlmService(Mode.AUTO, null, LlmLimits.DEFAULTS, json);
    }

    public LlmLimits defaults() {
        return defaults;
    }

    public Mode mode() {
        return mode;
    }

    /** The calls of one step, answered with the backend this caller gets ({@code clientSampling} may be null). */
    public LlmStep step(LlmAccount account, LlmBackend clientSampling) {
        return new LlmStep(account, backend(clientSampling), null, json);
    }

    /**
     * The calls of one step of an RLM at {@code depth} (0: the root), answered by {@code backend} (one
     * that {@link #backendFor} gave, wrapped by the run): its calls are at depth + 1, within the run's
     * depth limit, so the session's limit on the nesting of kernel callbacks does not apply.
     */
    public LlmStep step(LlmAccount account, LlmBackend backend, int depth) {
        return new LlmStep(account, backend, depth, json);
    }

    /** The backend this caller's calls go to ({@code clientSampling} may be null), or why there is none. */
    public LlmBackend backendFor(LlmBackend clientSampling) throws LlmException {
        Object backend = backend(clientSampling);
        if (backend instanceof String why) {
            throw new LlmException("NOT_CONFIGURED", why);
        }
        return (LlmBackend) backend;
    }

    /**
     * The backend, or the message of the NOT_CONFIGURED refusal llm_query gets without one (made into
     * an exception only if the step's code calls llm_query: most steps never do).
     */
    private Object backend(LlmBackend clientSampling) {
        return switch (mode) {
            case OFF -> "llm_query is switched off on this server (--llm-backend off / RLM_LLM_BACKEND=off)";
            case AGENT -> AGENT_ONLY;
            case OPENAI -> api;
            case SAMPLING ->
                clientSampling != null
                        ? clientSampling
                        : "llm_query needs MCP sampling here (--llm-backend sampling), and this MCP client did not declare "
                                + "the sampling capability";
            case AUTO -> api != null ? api : clientSampling != null ? clientSampling : AGENT_ONLY;
        };
    }

    /** Why a loop that needs a model of its own (rlm_solve) cannot run where the agent answers sub-calls. */
    private static final String AGENT_ONLY = "no model API is configured and this MCP client does not sample, so the "
            + "agent itself answers sub-calls: run code with rlm_execute, whose llm_query and rlm_query calls come back "
            + "to you to answer (rlm_answer); or set RLM_LLM_BASE_URL, RLM_LLM_MODEL and, if needed, RLM_LLM_API_KEY "
            + "where the server starts";
}

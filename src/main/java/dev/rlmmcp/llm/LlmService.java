package dev.rlmmcp.llm;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Locale;

/**
 * Sub-LLM calls for llm_query: which backend a step uses, and the limits sessions start with. The
 * mode decides: {@code auto} uses the OpenAI-compatible API when one is configured, else the calling
 * client's MCP sampling when it declared that capability; {@code sampling} and {@code openai} use
 * only that one; {@code off} refuses every call.
 */
public final class LlmService {

    public enum Mode {
        AUTO,
        SAMPLING,
        OPENAI,
        OFF;

        public static Mode of(String name) {
            try {
                return valueOf(name.strip().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "unknown llm backend '" + name + "': use auto, sampling, openai or off");
            }
        }
    }

    private final Mode mode;
    private final LlmBackend api;
    private final LlmLimits defaults;
    private final ObjectMapper json;

    /** {@code api} is the OpenAI-compatible backend, or null when none is configured. */
    public LlmService(Mode mode, LlmBackend api, LlmLimits defaults, ObjectMapper json) {
        if (mode == Mode.OPENAI && api == null) {
            throw new IllegalArgumentException("--llm-backend openai needs --llm-base-url / RLM_LLM_BASE_URL");
        }
        this.mode = mode;
        this.api = api;
        this.defaults = defaults;
        this.json = json;
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
            case OPENAI -> api;
            case SAMPLING ->
                clientSampling != null
                        ? clientSampling
                        : "llm_query needs MCP sampling here (--llm-backend sampling), and this MCP client did not declare "
                                + "the sampling capability";
            case AUTO ->
                api != null
                        ? api
                        : clientSampling != null
                                ? clientSampling
                                : "llm_query has no backend: this MCP client did not declare the sampling capability and the server "
                                        + "has no OpenAI-compatible API configured (set RLM_LLM_BASE_URL, RLM_LLM_MODEL and, if "
                                        + "needed, RLM_LLM_API_KEY where the server starts)";
        };
    }
}

package dev.rlmmcp.llm;

/**
 * A sub-LLM call that was refused or failed. {@code code} is what Python code sees as the
 * exception's code: NOT_CONFIGURED, LIMIT_EXCEEDED, PROMPT_TOO_LARGE, DEPTH_LIMIT, TIMEOUT or
 * BACKEND_ERROR; {@code limit} names the guardrail a refusal came from.
 */
public final class LlmException extends Exception {

    private final String code;
    private final String limit;

    public LlmException(String code, String message) {
        this(code, null, message);
    }

    public LlmException(String code, String limit, String message) {
        super(message);
        this.code = code;
        this.limit = limit;
    }

    public String code() {
        return code;
    }

    public String limit() {
        return limit;
    }
}

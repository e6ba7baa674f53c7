package dev.rlmmcp.base;

/** A refusal the agent can act on: a stable code, the argument at fault (if any) and how to fix it. */
public class RlmException extends RuntimeException {

    private final ErrorCode code;
    private final String argument;
    private final String fix;

    public RlmException(ErrorCode code, String message, String argument, String fix) {
        super(message);
        this.code = code;
        this.argument = argument;
        this.fix = fix;
    }

    public static RlmException invalid(String argument, String message, String fix) {
        return new RlmException(ErrorCode.INVALID_ARGUMENT, message, argument, fix);
    }

    public ErrorCode code() {
        return code;
    }

    public String argument() {
        return argument;
    }

    public String fix() {
        return fix;
    }
}

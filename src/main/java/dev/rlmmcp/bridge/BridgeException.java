package dev.rlmmcp.bridge;

/** A bridged call that could not be made or failed; {@code code} is a stable upper-case word. */
public final class BridgeException extends RuntimeException {

    public static final String UNKNOWN_SERVER = "UNKNOWN_SERVER";
    public static final String SERVER_NOT_ALLOWED = "SERVER_NOT_ALLOWED";
    public static final String UNKNOWN_TOOL = "UNKNOWN_TOOL";
    public static final String INVALID_ARGUMENTS = "INVALID_ARGUMENTS";
    public static final String SERVER_UNAVAILABLE = "SERVER_UNAVAILABLE";
    public static final String SERVER_ERROR = "SERVER_ERROR";
    public static final String TIMEOUT = "TIMEOUT";

    private final String code;

    public BridgeException(String code, String message) {
        super(message);
        this.code = code;
    }

    public BridgeException(String code, String message, Throwable cause) {
        super(message, cause);
        this.code = code;
    }

    public String code() {
        return code;
    }
}

package dev.rlmmcp.kernel.channel;

/**
 * A refusal or failure answered to a kernel callback: the harness raises it in Python as an
 * exception carrying {@code code} (a stable upper-case word) and the message.
 */
public final class CallbackException extends Exception {

    private final String code;

    public CallbackException(String code, String message) {
        super(message);
        this.code = code;
    }

    public String code() {
        return code;
    }
}

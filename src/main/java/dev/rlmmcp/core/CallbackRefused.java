package dev.rlmmcp.core;

/** A host callback's refusal: its error code and message reach the kernel's code as an exception. */
public final class CallbackRefused extends Exception {

    private final String code;

    public CallbackRefused(String code, String message) {
        super(message);
        this.code = code;
    }

    public String code() {
        return code;
    }
}

package dev.rlmmcp.base;

/** Stable error codes, part of the tools' contract with agents. */
public enum ErrorCode {
    INVALID_ARGUMENT,
    INVALID_DATA,
    SESSION_NOT_FOUND,
    SESSION_FINALIZED,
    SESSION_EXPIRED,
    /**
     * Cluster mode: this node does not run the session now (another live node owns it, or this node is cut
     * off from the cluster database or shutting down); nothing of the call ran, and a retry is routed to
     * the node that does. Over HTTP it is the node's "not serving" 503.
     */
    SESSION_MOVED,
    GUARDRAIL_STOP,
    VARIABLE_NOT_FOUND,
    FILE_NOT_FOUND,
    PATH_OUTSIDE_DATA_ROOT,
    PERMISSION_DENIED,
    TOO_LARGE,
    INTERRUPTED,
    KERNEL_UNAVAILABLE,
    /** The server runs as many kernels as --max-kernels / --max-total-memory-mb allow, none of them idle. */
    CAPACITY,
    KERNEL_ERROR,
    OUT_OF_MEMORY,
    NOT_CONFIGURED,
    NOT_FOUND,
    URL_REFUSED,
    UPSTREAM_ERROR,
    TIMEOUT,
    /** The session's step waits for the agent to answer its sub-calls (rlm_answer); other calls wait for that. */
    STEP_SUSPENDED,
    TRANSFER_ABORTED,
    INTERNAL_ERROR;

    public static ErrorCode of(String name) {
        try {
            return valueOf(name);
        } catch (IllegalArgumentException | NullPointerException e) {
            return KERNEL_ERROR;
        }
    }
}

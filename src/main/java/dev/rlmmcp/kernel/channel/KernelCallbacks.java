package dev.rlmmcp.kernel.channel;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The host's side of the kernel's callback channel: while an exec runs, kernel code may ask the host
 * for something ({@code llm_query}, a bridged MCP tool) and block until it is answered. Each request
 * is handled on a virtual thread of its own, several at once; a request whose exec ends first (done,
 * interrupted, timed out, cancelled, killed) has its thread interrupted and its answer discarded, so
 * handlers should let {@link InterruptedException} (or an interrupted blocking call) end them.
 */
@FunctionalInterface
public interface KernelCallbacks {

    /** Refuses every request: what an exec gets when its caller offers no callbacks. */
    KernelCallbacks NONE = (kind, request) -> {
        throw new CallbackException("NOT_AVAILABLE", "no host callbacks of kind '" + kind + "' are available here");
    };

    /**
     * Answers one request of the given kind ("llm", "mcp", ...). A {@link CallbackException} becomes
     * a structured error the harness raises as a Python exception; any other exception is reported
     * as an internal error.
     */
    JsonNode handle(String kind, JsonNode request) throws CallbackException, InterruptedException;

    /**
     * Whether the call's clock stands still while a request of this kind is handled: child RLMs ("rlm")
     * have limits of their own, and a request the calling agent answers waits on a person's or a model's
     * own pace, not on the code.
     */
    default boolean holdsClock(String kind) {
        return "rlm".equals(kind);
    }

    /** Callbacks that dispatch on kind; kinds not listed are refused as {@link #NONE} does. */
    static KernelCallbacks byKind(java.util.Map<String, KernelCallbacks> handlers) {
        java.util.Map<String, KernelCallbacks> copy = java.util.Map.copyOf(handlers);
        return (kind, request) -> copy.getOrDefault(kind, NONE).handle(kind, request);
    }
}

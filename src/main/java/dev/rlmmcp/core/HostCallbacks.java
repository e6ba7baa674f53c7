package dev.rlmmcp.core;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/**
 * What a step's code may ask of the host besides llm_query (child RLMs, bridged MCP tools), by
 * {@code kind}. Core's own interface, adapted to the kernel's callback channel inside core, so that
 * the layers above need not know the kernel.
 */
@FunctionalInterface
public interface HostCallbacks {

    /** No callbacks: every request is refused as not available. */
    HostCallbacks NONE = (kind, request) -> {
        throw new CallbackRefused("NOT_AVAILABLE", "no host callbacks of kind '" + kind + "' are available here");
    };

    /** The answer to {@code request}, or a refusal the code sees as an exception. */
    JsonNode handle(String kind, JsonNode request) throws CallbackRefused, InterruptedException;

    /** Each kind answered by its own handler; a kind none is given for is refused as {@link #NONE} does. */
    static HostCallbacks byKind(Map<String, HostCallbacks> handlers) {
        Map<String, HostCallbacks> copy = Map.copyOf(handlers);
        return (kind, request) -> copy.getOrDefault(kind, NONE).handle(kind, request);
    }
}

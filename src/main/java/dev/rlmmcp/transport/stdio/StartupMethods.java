package dev.rlmmcp.transport.stdio;

import dev.rlmmcp.transport.stateless.StatelessServer;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.Set;

/**
 * What a client may be answered before the server's start-up checks are done: what it needs to start
 * (initialize, the lists, ping) needs no kernel, Python or state store. Agent clients that do not wait
 * for a starting server (Codex) leave its tools out of the first turn, so these must not wait.
 */
final class StartupMethods {

    /** Requests of every revision whose answer is the same before and after the checks. */
    private static final Set<String> AT_ONCE = Set.of(
            McpSchema.METHOD_INITIALIZE,
            McpSchema.METHOD_PING,
            McpSchema.METHOD_TOOLS_LIST,
            McpSchema.METHOD_PROMPT_LIST,
            McpSchema.METHOD_PROMPT_GET,
            McpSchema.METHOD_RESOURCES_LIST,
            McpSchema.METHOD_RESOURCES_TEMPLATES_LIST,
            McpSchema.METHOD_LOGGING_SET_LEVEL,
            StatelessServer.METHOD_DISCOVER);

    private StartupMethods() {}

    /**
     * Whether {@code message} is handled as soon as it is read: a request named above, or a notification or
     * response (initialized, cancelled, an answer to the server's own request) that starts nothing.
     */
    static boolean answeredAtOnce(McpSchema.JSONRPCMessage message) {
        return !(message instanceof McpSchema.JSONRPCRequest request) || AT_ONCE.contains(request.method());
    }
}

package dev.rlmmcp.cluster;

import java.util.Optional;

/**
 * Where 2025 MCP sessions ({@code Mcp-Session-Id}) live in the cluster, for the transport: the node that
 * starts one records it with its initialize request, so any node can route to its home
 * ({@link Router#routeMcpSession}) or, when that home is gone, adopt it by replaying the initialize.
 * Implemented over {@code Leases.recordMcpSession}, {@code mcpSession} and {@code forgetMcpSession}.
 */
public interface McpSessionHomes {

    /** A new MCP session started on this node, with its initialize request as JSON. */
    void record(String mcpSessionId, String initializeJson);

    /** The initialize request a session started with, if the cluster knows the session. */
    Optional<String> initialize(String mcpSessionId);

    /** The session ended (DELETE, or unused for the idle time). */
    void forget(String mcpSessionId);
}

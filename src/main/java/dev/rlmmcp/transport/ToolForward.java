package dev.rlmmcp.transport;

import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.Optional;

/**
 * A tool call served by another node: in a cluster, a call at this node (the home of its client's MCP
 * session) whose {@code session_id} another live node owns is sent there and its result returned, the
 * client's progress and sampling relayed on this call's exchange.
 */
@FunctionalInterface
public interface ToolForward {

    /** Every call is served here: a single node. */
    ToolForward NONE = (exchange, request) -> Optional.empty();

    /** The result the owning node gave, or empty when this node serves the call itself. */
    Optional<McpSchema.CallToolResult> forwarded(McpSyncServerExchange exchange, McpSchema.CallToolRequest request);
}

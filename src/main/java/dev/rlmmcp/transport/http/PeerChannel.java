package dev.rlmmcp.transport.http;

import dev.rlmmcp.cluster.McpSessionHomes;
import dev.rlmmcp.cluster.PeerAuth;
import dev.rlmmcp.cluster.Router;

/**
 * The cluster part of the HTTP endpoint: a second connector on this node's peer address, where only
 * requests signed by a peer ({@link PeerAuth}) are served, and the routing of client requests to the node
 * that owns their session ({@link Router}); 2025 MCP sessions are recorded in {@code homes}.
 *
 * @param host where peers reach this node (the host of {@code --node-address})
 * @param port its port (0: any free one, for tests)
 */
public record PeerChannel(Router router, McpSessionHomes homes, PeerAuth auth, String host, int port) {}

/**
 * Cluster mode's node-to-node traffic on the transport side: which node a request belongs to
 * ({@link dev.rlmmcp.transport.peer.RouteKey}), the streaming forward of a client's HTTP request to that node
 * ({@link dev.rlmmcp.transport.peer.PeerProxy}), and the tool-level forward of a call at a 2025 MCP session's home
 * ({@link dev.rlmmcp.transport.peer.PeerCall}). A body held in memory travels on pooled blocking keep-alive
 * connections ({@link dev.rlmmcp.transport.peer.PeerConnections}), a large streamed one on java.net.http
 * ({@link dev.rlmmcp.transport.peer.PeerClients}). A request is delivered at most once: it is sent again only when
 * the owner cannot have received it (see {@code PeerConnections}), and the owner refuses a second delivery of one
 * idempotency key ({@link dev.rlmmcp.transport.peer.Deliveries}). A session's remote route is remembered ({@link dev.rlmmcp.transport.peer.RouteCache}). Every request between nodes is signed with
 * {@link dev.rlmmcp.cluster.PeerAuth}; which node owns what is the cluster's {@link dev.rlmmcp.cluster.Router}.
 *
 * <p>Entry types: {@code PeerProxy}, {@code PeerCall}, {@code RouteKey}, {@code RouteCache}, {@code PeerClients},
 * {@code PeerConnections}, {@code Deliveries}. May use {@code dev.rlmmcp.cluster}, the
 * transport root ({@link dev.rlmmcp.transport.ToolForward}) and {@code .stateless}; {@code .http} uses it, never the
 * other way round.
 */
package dev.rlmmcp.transport.peer;

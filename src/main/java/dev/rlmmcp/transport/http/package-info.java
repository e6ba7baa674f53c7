/**
 * Every HTTP endpoint on one Jetty port: Streamable HTTP at /mcp, legacy HTTP+SSE at /sse and /message, the
 * plain /rpc, /health and /healthz, the trace viewer, and in front of them the access log, Host and Origin
 * checks, CORS and API-key authentication. {@link dev.rlmmcp.transport.http.JsonResponse} writes every JSON
 * body and error. In a cluster ({@link dev.rlmmcp.transport.http.PeerChannel}) a second connector serves peers'
 * signed requests only ({@code PeerGate}), requests on /mcp and /rpc are routed to their session's node
 * ({@code RoutingFilter}), and 2025 MCP sessions are recorded and adopted ({@code McpSessionAdoption}).
 *
 * <p>Entry type: {@link dev.rlmmcp.transport.http.HttpEndpoint}. May use the transport root, {@code .stateless},
 * {@code .jsonrpc}, {@code .http.ui}, {@code .peer}, {@code dev.rlmmcp.cluster} and the layers below; not
 * {@code .stdio}.
 */
package dev.rlmmcp.transport.http;

/**
 * Every HTTP endpoint on one Jetty port: Streamable HTTP at /mcp, legacy HTTP+SSE at /sse and /message, the
 * plain /rpc, /health and /healthz, the trace viewer, and in front of them the access log, Host and Origin
 * checks, CORS and API-key authentication. {@link dev.rlmmcp.transport.http.JsonResponse} writes every JSON
 * body and error.
 *
 * <p>Entry type: {@link dev.rlmmcp.transport.http.HttpEndpoint}. May use the transport root, {@code .stateless},
 * {@code .jsonrpc}, {@code .http.ui} and the layers below; not {@code .stdio}.
 */
package dev.rlmmcp.transport.http;

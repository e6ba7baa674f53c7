/**
 * JSON-RPC messages as MCP carries them: parsing with refusals of what is malformed, error objects without
 * Java internals, the requests being served with their call contexts (which a client's cancellation
 * finds), and the SDK transport that carries what the server sends while serving one request.
 *
 * <p>Entry types: {@link dev.rlmmcp.transport.jsonrpc.JsonRpc},
 * {@link dev.rlmmcp.transport.jsonrpc.ServedRequests}. May use tools (for the call-context keys) and the
 * layers below; knows no transport and no revision.
 */
package dev.rlmmcp.transport.jsonrpc;

/**
 * The stateless revision of MCP (2026-07-28): requests without initialize, each naming its version and the
 * client's capabilities in its _meta (and, on HTTP, in headers); server/discover; input rounds, where a call
 * that asks the client something answers input_required and is resumed by the retried request; tasks for
 * long calls; subscriptions/listen.
 *
 * <p>Entry type: {@link dev.rlmmcp.transport.stateless.StatelessServer}, the one type transports call.
 * May use {@code .jsonrpc}, tools and the layers below; knows no transport.
 */
package dev.rlmmcp.transport.stateless;

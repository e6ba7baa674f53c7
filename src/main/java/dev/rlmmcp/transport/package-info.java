/**
 * MCP transports, and what they share. Every transport frames messages its own way and hands each to the
 * {@link dev.rlmmcp.transport.InboundRouter}, which parses and refuses, acts on cancellations, chooses the
 * revision (the MCP SDK's session for the 2025 revisions, {@link dev.rlmmcp.transport.stateless} for
 * 2026-07-28) and dispatches; {@link dev.rlmmcp.transport.CallChannel} is the way out for one request.
 * {@link dev.rlmmcp.transport.McpServers} builds the SDK servers from the tools.
 *
 * <p>Entry types: {@link dev.rlmmcp.transport.McpServers}, {@link dev.rlmmcp.transport.InboundRouter}.
 * This package may use {@code .stateless}, {@code .jsonrpc}, tools and the layers below them; the transports
 * in {@code .stdio} and {@code .http} use it, never the other way round.
 */
package dev.rlmmcp.transport;

/**
 * MCP over stdin and stdout, one JSON-RPC message per line: the transport, the front that answers
 * initialize and the lists while the server is still starting, and the answers kept for the next start.
 *
 * <p>Entry types: {@link dev.rlmmcp.transport.stdio.StdioEndpoint}, {@link dev.rlmmcp.transport.stdio.StdioFront}.
 * May use the transport root, {@code .stateless}, {@code .jsonrpc} and the layers below; not {@code .http}.
 */
package dev.rlmmcp.transport.stdio;

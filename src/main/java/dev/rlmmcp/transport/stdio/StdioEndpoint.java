package dev.rlmmcp.transport.stdio;

import dev.rlmmcp.transport.McpServers;
import io.modelcontextprotocol.server.McpSyncServer;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.CompletableFuture;

/** MCP over stdin/stdout: serves until the client closes stdin. */
public final class StdioEndpoint implements AutoCloseable {

    private final StdioTransport transport;
    private final McpSyncServer server;
    /** The SDK server for requests of protocol 2026-07-28, which come without initialize. */
    private final McpSyncServer stateless;

    public StdioEndpoint(McpServers servers, InputStream in, OutputStream out, int maxMessageBytes) {
        this(servers, in, out, maxMessageBytes, CompletableFuture.completedFuture(null));
    }

    /**
     * Reads and answers messages from now on: initialize, the lists and ping at once, the others once
     * {@code answerable} completes (the start-up checks have passed), so that a client's start overlaps
     * them. If it completes exceptionally, those others are refused with its message.
     */
    public StdioEndpoint(
            McpServers servers,
            InputStream in,
            OutputStream out,
            int maxMessageBytes,
            CompletableFuture<?> answerable) {
        this(servers, in, out, maxMessageBytes, answerable, StartupAnswers.none());
    }

    /**
     * As above, for a stream a {@link StdioFront} read first ({@code in} its {@link StdioFront#input}): what it
     * answered is not answered again, and the answers to keep for the next start are kept in {@code answers}.
     */
    public StdioEndpoint(
            McpServers servers,
            InputStream in,
            OutputStream out,
            int maxMessageBytes,
            CompletableFuture<?> answerable,
            StartupAnswers answers) {
        transport = new StdioTransport(
                servers.mapper(),
                in,
                out,
                maxMessageBytes,
                servers.statelessTools(),
                servers.toolOffer(),
                answerable,
                answers);
        server = servers.serve(transport);
        stateless = servers.serve(transport.statelessProvider());
    }

    /**
     * Completes once the client has its tools (tools/list answered), asked for anything else, or left: a
     * start's background work (the Python check, warm kernels, the state store) waits for it, rather than
     * take the cores from the answers an agent client waits for before its first turn.
     */
    public CompletableFuture<Void> listed() {
        return transport.listed();
    }

    public void awaitClientGone() throws InterruptedException {
        transport.awaitClosed();
    }

    @Override
    public void close() {
        stateless.closeGracefully();
        server.closeGracefully();
    }
}

package dev.rlmmcp.face;

import io.modelcontextprotocol.server.McpSyncServer;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.CompletableFuture;

/** MCP over stdin/stdout: serves until the client closes stdin. */
public final class StdioFace implements AutoCloseable {

    private final StdioTransport transport;
    private final McpSyncServer server;
    /** The SDK server for requests of protocol 2026-07-28, which come without initialize. */
    private final McpSyncServer revision;

    public StdioFace(McpServers servers, InputStream in, OutputStream out, int maxMessageBytes) {
        this(servers, in, out, maxMessageBytes, CompletableFuture.completedFuture(null));
    }

    /**
     * Reads and parses messages from now on, and answers them once {@code answerable} completes: what
     * a first message costs the JVM (the SDK's server, Jackson's first parse) then overlaps the
     * start-up checks, and nothing is answered if they fail.
     */
    public StdioFace(McpServers servers, InputStream in, OutputStream out, int maxMessageBytes,
            CompletableFuture<?> answerable) {
        transport = new StdioTransport(servers.mapper(), in, out, maxMessageBytes, servers.revisionTools(), answerable);
        server = servers.serve(transport);
        revision = servers.serve(transport.revisionProvider());
    }

    public void awaitClientGone() throws InterruptedException {
        transport.awaitClosed();
    }

    @Override
    public void close() {
        revision.closeGracefully();
        server.closeGracefully();
    }
}

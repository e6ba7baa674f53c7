package dev.rlmmcp.face;

import io.modelcontextprotocol.server.McpSyncServer;
import java.io.InputStream;
import java.io.OutputStream;

/** MCP over stdin/stdout: serves until the client closes stdin. */
public final class StdioFace implements AutoCloseable {

    private final StdioTransport transport;
    private final McpSyncServer server;

    public StdioFace(McpServers servers, InputStream in, OutputStream out, int maxMessageBytes) {
        transport = new StdioTransport(servers.mapper(), in, out, maxMessageBytes);
        server = servers.serve(transport);
    }

    public void awaitClientGone() throws InterruptedException {
        transport.awaitClosed();
    }

    @Override
    public void close() {
        server.closeGracefully();
    }
}

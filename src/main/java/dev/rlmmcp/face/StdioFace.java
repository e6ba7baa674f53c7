package dev.rlmmcp.face;

import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import java.io.InputStream;
import java.io.OutputStream;

/** MCP over stdin/stdout. Nothing but protocol may reach stdout, so the JVM's System.out is sent to stderr. */
public final class StdioFace {

    private StdioFace() {
    }

    /** Serves until the client closes stdin. */
    public static McpSyncServer start(McpServers servers, InputStream in, OutputStream out, int maxMessageBytes) {
        return servers.serve(new StdioServerTransportProvider(servers.mapper(), in, out, maxMessageBytes));
    }
}

package dev.rlmmcp.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The other MCP servers kernel code may call (code-execution mode). The core sees only this; the
 * clients behind it live outside the core, since the core never touches the MCP SDK. Clients start
 * on first use and are kept alive; every method may block while a server starts.
 */
public interface BridgedServers extends AutoCloseable {

    /** Every server the configuration defines, by name. */
    List<ServerDefinition> discovered();

    default Optional<ServerDefinition> find(String name) {
        return discovered().stream().filter(d -> d.name().equals(name)).findFirst();
    }

    /** The server's tools (cached while its client lives). */
    List<BridgedTool> listTools(String server);

    /**
     * Calls a tool and returns its result as MCP's CallToolResult object ({@code content},
     * {@code structuredContent}, {@code isError}); a server that dies mid-call fails it at once.
     */
    ObjectNode callTool(String server, String tool, JsonNode arguments, Duration timeout) throws InterruptedException;

    @Override
    void close();

    /** No servers at all. */
    BridgedServers NONE = new BridgedServers() {
        @Override
        public List<ServerDefinition> discovered() {
            return List.of();
        }

        @Override
        public List<BridgedTool> listTools(String server) {
            throw new BridgeException(
                    BridgeException.UNKNOWN_SERVER, "no MCP server named '" + server + "' is configured");
        }

        @Override
        public ObjectNode callTool(String server, String tool, JsonNode arguments, Duration timeout) {
            throw new BridgeException(
                    BridgeException.UNKNOWN_SERVER, "no MCP server named '" + server + "' is configured");
        }

        @Override
        public void close() {}
    };
}

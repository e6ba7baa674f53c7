package dev.rlmmcp.core;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.rlmmcp.bridge.Aliases;
import dev.rlmmcp.bridge.BridgeException;
import dev.rlmmcp.bridge.BridgedServers;
import dev.rlmmcp.bridge.BridgedTool;
import dev.rlmmcp.bridge.ServerDefinition;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The "mcp" callbacks of one run: kernel code may list and call the tools of the servers this run
 * was given, and no other; the check is made here, on the host, whatever the Python side believes.
 * Requests: {@code {"op": "call_tool", "server", "tool", "arguments"}}, {@code {"op": "list_tools",
 * "server"}}, {@code {"op": "list_servers"}}.
 */
public final class McpCallbacks implements HostCallbacks {

    public static final String KIND = "mcp";

    private final BridgedServers bridge;
    private final List<String> allowed;
    private final Duration callTimeout;
    private final ObjectMapper json;

    public McpCallbacks(BridgedServers bridge, List<String> allowed, Duration callTimeout, ObjectMapper json) {
        this.bridge = bridge;
        this.allowed = List.copyOf(allowed);
        this.callTimeout = callTimeout;
        this.json = json;
    }

    /** These callbacks under their kind, for {@link HostCallbacks#byKind}. */
    public HostCallbacks byKind() {
        return HostCallbacks.byKind(Map.of(KIND, this));
    }

    @Override
    public JsonNode handle(String kind, JsonNode request) throws CallbackRefused, InterruptedException {
        String op = request.path("op").asText();
        try {
            return switch (op) {
                case "list_servers" -> json.valueToTree(allowed);
                case "list_tools" -> tools(server(request));
                case "call_tool" ->
                    bridge.callTool(
                            server(request), request.path("tool").asText(), request.get("arguments"), callTimeout);
                default -> throw new CallbackRefused("UNKNOWN_OP", "unknown mcp request '" + op + "'");
            };
        } catch (BridgeException e) {
            throw new CallbackRefused(e.code(), e.getMessage());
        }
    }

    private String server(JsonNode request) {
        String server = request.path("server").asText();
        if (allowed.contains(server)) {
            return server;
        }
        if (bridge.find(server).isPresent()) {
            throw new BridgeException(
                    BridgeException.SERVER_NOT_ALLOWED,
                    "MCP server '" + server
                            + "' is not loaded in this run (servers: " + String.join(", ", allowed)
                            + "); name it in run_python's servers to call it");
        }
        throw new BridgeException(
                BridgeException.UNKNOWN_SERVER,
                "no MCP server named '" + server + "' is configured; this run may call: "
                        + (allowed.isEmpty() ? "none" : String.join(", ", allowed)));
    }

    private ArrayNode tools(String server) {
        ArrayNode tools = json.createArrayNode();
        for (BridgedTool tool : bridge.listTools(server)) {
            tools.addObject()
                    .put("name", tool.name())
                    .put("description", tool.description())
                    .set("inputSchema", tool.inputSchema());
        }
        return tools;
    }

    /**
     * What the kernel is told before the code runs: the allowed servers with Python aliases for them and
     * their tools, and the names of every configured server. Never a command, env value, URL or header.
     */
    public BridgeSetup kernelSetup() {
        Map<String, String> serverAliases = Aliases.of(allowed, "server");
        List<BridgeSetup.Server> servers = allowed.stream()
                .map(name -> {
                    List<BridgedTool> tools = bridge.listTools(name);
                    Map<String, String> toolAliases =
                            Aliases.of(tools.stream().map(BridgedTool::name).toList(), "tool");
                    return new BridgeSetup.Server(
                            name,
                            serverAliases.get(name),
                            tools.stream()
                                    .map(t -> new BridgeSetup.Tool(
                                            t.name(), toolAliases.get(t.name()), t.description(), t.inputSchema()))
                                    .toList());
                })
                .toList();
        return new BridgeSetup(
                servers,
                bridge.discovered().stream()
                        .map(ServerDefinition::name)
                        .sorted()
                        .toList());
    }
}

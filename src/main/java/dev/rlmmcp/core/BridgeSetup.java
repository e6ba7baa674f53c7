package dev.rlmmcp.core;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/**
 * The MCP servers a run may call, set up in the kernel before its code runs: each with a Python alias
 * and its tools (with aliases and input schemas); {@code discovered} names every configured server.
 * Never a command, env value, URL or header.
 */
public record BridgeSetup(List<Server> servers, List<String> discovered) {

    public record Server(String name, String alias, List<Tool> tools) {}

    public record Tool(String name, String alias, String description, JsonNode inputSchema) {}
}

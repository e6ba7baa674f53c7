package dev.rlmmcp.bridge;

import com.fasterxml.jackson.databind.JsonNode;

/** A tool of a bridged server, as its tools/list describes it. */
public record BridgedTool(String name, String description, JsonNode inputSchema) {}

/**
 * The {@link dev.rlmmcp.bridge.BridgedServers} of {@code dev.rlmmcp.bridge} made with the official MCP Java
 * SDK's clients: {@link dev.rlmmcp.bridge.sdk.SdkBridgedServers} (stdio servers as child processes, HTTP
 * servers over Streamable HTTP). The one package below the top that may use the MCP SDK; it may use
 * {@code dev.rlmmcp.bridge} and {@code dev.rlmmcp.base}, and only {@code dev.rlmmcp.cli} may use it.
 */
package dev.rlmmcp.bridge.sdk;

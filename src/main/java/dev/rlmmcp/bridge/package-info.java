/**
 * Other MCP servers that kernel code may call (code-execution mode): {@link dev.rlmmcp.bridge.BridgedServers}
 * is all the layers above see of them, {@link dev.rlmmcp.bridge.ServerConfigs} finds their definitions where
 * MCP clients keep them, {@link dev.rlmmcp.bridge.Aliases} gives their tools names Python can call. The
 * clients themselves are in {@code dev.rlmmcp.bridge.sdk}, so that this package stays free of the MCP SDK.
 * A sibling of kernel, data, llm and store: it may use only {@code dev.rlmmcp.base}.
 */
package dev.rlmmcp.bridge;

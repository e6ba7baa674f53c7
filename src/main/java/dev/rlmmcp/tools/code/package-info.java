/**
 * run_python ({@link dev.rlmmcp.tools.code.RunPythonTool}): one program in a throwaway or existing
 * kernel that may call other MCP servers' tools through the bridge. It uses the tools package, rlm,
 * core and bridge.
 */
package dev.rlmmcp.tools.code;

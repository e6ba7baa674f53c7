/**
 * What the end-to-end tests drive the real server with: the server jar run as a process
 * ({@link dev.rlmmcp.e2e.support.ServerProcess}, or {@link dev.rlmmcp.e2e.support.RunningServer} as a JUnit
 * extension that starts it before a class and stops it after), MCP clients (the official TypeScript SDK
 * through {@link dev.rlmmcp.e2e.support.McpDriver}, raw JSON-RPC through
 * {@link dev.rlmmcp.e2e.support.RawClient} and {@link dev.rlmmcp.e2e.support.StdioRpc}), scripted model
 * endpoints, the agent CLIs (Claude Code, Codex) and a separate user account's launch. Nothing here asserts
 * what the server should do; the tests in {@code dev.rlmmcp.e2e} do. Most of it uses no production class; the
 * conformance server assembles the production server with fixture tools added, and the scripted models
 * plug into the LLM layer's test server.
 */
package dev.rlmmcp.e2e.support;

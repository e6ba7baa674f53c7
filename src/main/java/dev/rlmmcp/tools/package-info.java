/**
 * The MCP tool surface: the tool interface ({@link dev.rlmmcp.tools.RlmTool}), the catalog every
 * transport calls a tool through ({@link dev.rlmmcp.tools.ToolCatalog}), the argument and schema
 * helpers, and the one mapping from core's records to the JSON replies and their renderings (text,
 * Markdown, TOON). The tools themselves are in the subpackages. It may use rlm, core, data, llm,
 * bridge and base, never the kernel: it sees core's records only.
 */
package dev.rlmmcp.tools;

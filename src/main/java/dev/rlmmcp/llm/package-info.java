/**
 * Sub-LLM calls made by kernel code through {@code llm_query}: {@link dev.rlmmcp.llm.LlmService} picks the
 * backend (an OpenAI-compatible API, or the MCP client's sampling handed down per call) and the limits a
 * session starts with; {@link dev.rlmmcp.llm.LlmStep} answers one step's calls, checked against those limits
 * and counted. A sibling of kernel, data, store and bridge: it may use {@code dev.rlmmcp.base} and, of the
 * kernel, only the callback interface it implements ({@code dev.rlmmcp.kernel.channel.KernelCallbacks}).
 */
package dev.rlmmcp.llm;

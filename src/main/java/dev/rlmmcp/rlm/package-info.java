/**
 * Recursive Language Models: the loop that has a model write code for a session's REPL until it
 * answers ({@link dev.rlmmcp.rlm.RlmLoop}), the child runs its code starts with rlm_query, their
 * limits, metering and trajectories, and the entry the tools use ({@link dev.rlmmcp.rlm.RlmRuns}).
 * It may use core, llm, data, bridge and base, never the kernel.
 */
package dev.rlmmcp.rlm;

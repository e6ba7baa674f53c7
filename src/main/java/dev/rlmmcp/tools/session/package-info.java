/**
 * The tools about sessions as a whole: start one with its context, run an RLM over it
 * ({@link dev.rlmmcp.tools.session.SolveTool}), run a REPL step, read a variable or the trace,
 * finalize, list and delete. They use the tools package, rlm, core and data.
 */
package dev.rlmmcp.tools.session;

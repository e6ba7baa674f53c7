/**
 * The tools that work in one session's REPL: run code, load data or a file, read, list and clear
 * variables, and report memory ({@link dev.rlmmcp.tools.repl.ExecuteTool} is the main one). They
 * use the tools package, rlm (for steps that may start child RLMs) and core.
 */
package dev.rlmmcp.tools.repl;

/**
 * Every rlm-mcp tool in one catalog ({@link dev.rlmmcp.tools.standard.StandardTools}), apart from
 * the tools package because the tools' own packages are built on it: the full catalog sits above
 * both. It may use every tools package, rlm, core, data, bridge and base.
 */
package dev.rlmmcp.tools.standard;

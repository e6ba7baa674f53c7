/**
 * End-to-end tests (run by failsafe as {@code *IT}): the server jar as a process, reached over stdio,
 * Streamable HTTP, legacy SSE and {@code /rpc} by real clients, as users and agent CLIs reach it. The
 * helpers they share are in {@code dev.rlmmcp.e2e.support}; the tests see the server only through its
 * transports, its files and its processes.
 */
package dev.rlmmcp.e2e;

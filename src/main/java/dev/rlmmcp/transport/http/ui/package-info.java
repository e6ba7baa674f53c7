/**
 * The read-only trace viewer at /ui: the sessions, their steps and RLM runs, as pages and JSON lines, behind
 * the API key or a login cookie.
 *
 * <p>Entry type: {@link dev.rlmmcp.transport.http.ui.UiServlet}. May use tools, rlm, core and the layers below; knows
 * nothing of MCP or of the rest of the transports.
 */
package dev.rlmmcp.transport.http.ui;

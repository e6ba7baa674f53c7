package dev.rlmmcp.cluster;

/** Which node serves a session: this one, or a live peer at its peer address. */
public interface Router {
    sealed interface Route permits Local, Remote {}

    record Local() implements Route {}

    record Remote(String nodeId, String address) implements Route {} // address = peer host:port

    Route route(String sessionId); // Local if held or acquired now (taking over a dead owner's), else Remote

    Route routeMcpSession(String mcpSessionId); // the home of a 2025 MCP session; Local if adopted here

    String nodeId();

    boolean serving(); // false while fenced or after handover began
}

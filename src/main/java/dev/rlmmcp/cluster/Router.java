package dev.rlmmcp.cluster;

/** Which node serves a request: this one, or a live peer at its peer address ({@link LeaseRouter}). */
public interface Router {

    /** Where a request goes. */
    sealed interface Route permits Local, Remote {}

    /** Served here. */
    record Local() implements Route {}

    /** Served by a live peer; {@code address} is its peer host:port. */
    record Remote(String nodeId, String address) implements Route {}

    /** Local if this node holds the session or takes it over now (its owner is gone), else its live owner. */
    Route route(String sessionId);

    /** The home of a 2025 MCP session; Local if it is this node, unknown, or its home is gone (adopted here). */
    Route routeMcpSession(String mcpSessionId);

    String nodeId();

    /** Whether this node takes new work: false while fenced, or once the handover at SIGTERM began. */
    boolean serving();

    /**
     * Whether a request this node would serve itself may be served now: never while fenced; during the
     * handover at SIGTERM only one for a session this node still holds (it runs until it is released);
     * otherwise always. {@code sessionId} null: the request names no session (new work).
     */
    default boolean serves(String sessionId) {
        return serving();
    }

    /**
     * A request for {@code sessionId} was served here, forwarded by the peer {@code forwardedBy} (null:
     * it came from a client), so that a session whose requests keep arriving at another node moves there.
     */
    default void served(String sessionId, String forwardedBy) {}
}

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

    /**
     * Where the cluster routes a session now, without taking it over (a node waiting for a peer's answer asks
     * this: taking the session from under the node that may be running the request would only move it).
     */
    default Route peek(String sessionId) {
        return route(sessionId);
    }

    /** The home of a 2025 MCP session; Local if it is this node, unknown, or its home is gone (adopted here). */
    Route routeMcpSession(String mcpSessionId);

    String nodeId();

    /** Whether this node takes new work: false while fenced, or once the handover at SIGTERM began. */
    boolean serving();

    /** A request this node serves itself, counted until it is closed (once, when the request has ended). */
    interface Admission extends AutoCloseable {
        @Override
        void close();
    }

    /**
     * Lets in a request this node serves itself, for {@code sessionId} (null: it names none), counted
     * until the admission is closed; null if this node is not serving ({@link #serving}). A session
     * is saved and handed over only once every admitted request for it has ended.
     */
    default Admission admit(String sessionId) {
        return serving() ? () -> {} : null;
    }
}

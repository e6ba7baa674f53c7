package dev.rlmmcp.rlm;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The child sessions made for the agent's rlm_query requests, each with the run it belongs to and its
 * depth, so that a step in a child session is counted against its tree's limits (depth, children, time)
 * rather than starting a tree of its own.
 */
final class AgentTrees {

    /** A run and the depth of the RLM whose code a step runs. */
    record Tree(Run run, int depth) {}

    private final Map<String, Tree> bySession = new ConcurrentHashMap<>();

    /** The tree a child session belongs to, or null for a session that is no agent's child. */
    Tree of(String sessionId) {
        return bySession.get(sessionId);
    }

    void add(String sessionId, Tree tree) {
        bySession.put(sessionId, tree);
    }

    void remove(String sessionId) {
        bySession.remove(sessionId);
    }
}

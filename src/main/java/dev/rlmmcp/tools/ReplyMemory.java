package dev.rlmmcp.tools;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * What the text replies of one server have already told each connection, so that a footer says only
 * what changed: the sessions whose id it has seen, and the last memory warning band of each session.
 * Bounded: the least recently used connections are forgotten (they then see an id once more).
 */
final class ReplyMemory {

    private static final int MAX_CONNECTIONS = 10_000;

    private final Map<String, Seen> connections = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Seen> eldest) {
            return size() > MAX_CONNECTIONS;
        }
    };

    /** A connection's view, for one reply. */
    record Seen(Set<String> sessions, Map<String, Integer> memoryBands) {}

    /** True the first time this connection gets a reply about this session. */
    synchronized boolean firstReply(String connection, String session) {
        return view(connection).sessions().add(session);
    }

    /** The memory band last reported to this connection for this session (0: none), replaced by {@code band}. */
    synchronized int swapMemoryBand(String connection, String session, int band) {
        Integer last = view(connection).memoryBands().put(session, band);
        return last == null ? 0 : last;
    }

    private Seen view(String connection) {
        return connections.computeIfAbsent(
                String.valueOf(connection), c -> new Seen(new HashSet<>(), new LinkedHashMap<>()));
    }
}

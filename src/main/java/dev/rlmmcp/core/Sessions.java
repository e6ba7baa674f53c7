package dev.rlmmcp.core;

import java.security.SecureRandom;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** All sessions of this server: one default session per client connection, found by id from anywhere. */
public final class Sessions implements AutoCloseable {

    private static final SecureRandom RANDOM = new SecureRandom();

    private final KernelFactory kernels;
    private final Map<String, Session> byId = new ConcurrentHashMap<>();
    private final Map<String, Session> byConnection = new ConcurrentHashMap<>();

    public Sessions(KernelFactory kernels) {
        this.kernels = kernels;
    }

    /**
     * The session a call works on: the one named by {@code sessionId}, or the connection's default
     * session when no id is given.
     */
    public Session resolve(String sessionId, String connection) {
        if (sessionId == null) {
            return byConnection.computeIfAbsent(connection, c -> register(newId()));
        }
        Session session = byId.get(sessionId);
        if (session == null) {
            throw new RlmException(ErrorCode.SESSION_NOT_FOUND, "no session with id " + sessionId, "session_id",
                    "omit session_id to use this connection's default session, or use an id returned by an earlier call");
        }
        return session;
    }

    /** Ends the default session of a connection that has gone away. */
    public void connectionClosed(String connection) {
        Session session = byConnection.remove(connection);
        if (session != null) {
            byId.remove(session.id());
            session.close();
        }
    }

    public Collection<Session> all() {
        return List.copyOf(byId.values());
    }

    public KernelFactory kernels() {
        return kernels;
    }

    private Session register(String id) {
        Session session = new Session(id, kernels);
        byId.put(id, session);
        return session;
    }

    private static String newId() {
        byte[] bytes = new byte[9];
        RANDOM.nextBytes(bytes);
        return "s-" + HexFormat.of().formatHex(bytes);
    }

    @Override
    public void close() {
        byId.values().parallelStream().forEach(Session::close);
        byId.clear();
        byConnection.clear();
        kernels.close();
    }
}

package dev.rlmmcp.store.pg;

import dev.rlmmcp.store.StoreException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Who owns what in the cluster: each node's lease (renewed by its heartbeat; the database's clock
 * alone decides when it has expired), each session's owner and epoch, and each 2025 MCP session's
 * home node. A session changes owner only when its owner's lease has expired (or it has none), and
 * then its epoch goes up by one; the epochs this node holds are kept here, and every write about a
 * session is fenced by them (see {@link PgSessionDatabase}). A node whose own lease is not live can
 * neither claim nor take over a session.
 */
public final class Leases {

    /** A session's owner node (or a node alone, epoch 0), and whether its lease is live. */
    public record Owner(String nodeId, String address, long epoch, boolean live) {}

    /** A session of the cluster with its owner (null: released) and its record (null: none yet). */
    public record Listed(String id, Owner owner, String record) {}

    /** The home node of a 2025 MCP session and the initialize request that opened it. */
    public record McpHome(Owner home, String initialize) {}

    /** This node's lease is live in the database's clock. */
    static final String ME_LIVE = "EXISTS (SELECT 1 FROM rlm_nodes me WHERE me.node_id = ? AND me.lease_until > now())";

    private static final String OWNER = """
            SELECT s.id, s.owner_node, n.address, s.epoch, coalesce(n.lease_until > now(), false), s.record
            FROM rlm_sessions s LEFT JOIN rlm_nodes n ON n.node_id = s.owner_node""";

    private final Connections db;
    private final Connections heartbeat;
    private final String nodeId;
    private final String address;
    private final Map<String, Long> held = new ConcurrentHashMap<>();

    Leases(Connections db, Connections heartbeat, String nodeId, String address) {
        this.db = db;
        this.heartbeat = heartbeat;
        this.nodeId = nodeId;
        this.address = address;
    }

    public String nodeId() {
        return nodeId;
    }

    /** Upserts this node's row with {@code lease_until = now() + lease}; throws StoreException if the DB fails. */
    public void renew(Duration lease) {
        heartbeat.call("renew this node's lease", c -> {
            try (PreparedStatement s = c.prepareStatement("""
                    INSERT INTO rlm_nodes (node_id, address, lease_until)
                    VALUES (?, ?, now() + ? * interval '1 millisecond')
                    ON CONFLICT (node_id) DO UPDATE SET address = excluded.address,
                        lease_until = excluded.lease_until""")) {
                s.setString(1, nodeId);
                s.setString(2, address);
                s.setLong(3, lease.toMillis());
                return s.executeUpdate();
            }
        });
    }

    /** This node takes no new sessions: others route new work away from it. */
    public void draining() {
        update("mark this node draining", "UPDATE rlm_nodes SET draining = true WHERE node_id = ?", nodeId);
    }

    /** Ends this node's lease now, so that peers take over what it still owns at once; holds nothing after. */
    public void leave() {
        held.clear();
        update("end this node's lease", "UPDATE rlm_nodes SET lease_until = now() WHERE node_id = ?", nodeId);
    }

    /** Registers a new session, owned here at epoch 1 (or taken over, if its id is known and free). */
    public long claim(String sessionId) {
        if (claimNew(sessionId)) {
            return 1;
        }
        return acquire(sessionId)
                .orElseThrow(() -> new StoreException(
                        "cannot claim session " + sessionId + ": it exists and a live node owns it, "
                                + "or this node's lease is not live",
                        null));
    }

    /** Registers a session the cluster does not know, owned here at epoch 1; false if the id is known or this node's lease is not live. */
    public boolean claimNew(String sessionId) {
        int rows = db.call("claim session " + sessionId, c -> {
            try (PreparedStatement s = c.prepareStatement("INSERT INTO rlm_sessions (id, owner_node, epoch) "
                    + "SELECT ?, ?, 1 WHERE " + ME_LIVE + " ON CONFLICT (id) DO NOTHING")) {
                s.setString(1, sessionId);
                s.setString(2, nodeId);
                s.setString(3, nodeId);
                return s.executeUpdate();
            }
        });
        if (rows == 1) {
            held.put(sessionId, 1L);
        }
        return rows == 1;
    }

    /**
     * The epoch at which this node holds the session: the one it holds already, or a new one (epoch + 1)
     * if the session is unowned or its owner's lease has expired; empty if a live other node owns it,
     * if there is no such session, or if this node's own lease is not live.
     */
    public OptionalLong acquire(String sessionId) {
        Long mine = held.get(sessionId);
        if (mine != null) {
            return OptionalLong.of(mine);
        }
        OptionalLong taken = db.call("take over session " + sessionId, c -> {
            try (PreparedStatement s = c.prepareStatement("""
                    UPDATE rlm_sessions s SET owner_node = ?, epoch = s.epoch + 1, updated_at = now()
                    WHERE s.id = ? AND\s""" + ME_LIVE + """
                     AND (s.owner_node IS NULL OR s.owner_node = ? OR NOT EXISTS (SELECT 1 FROM rlm_nodes n
                        WHERE n.node_id = s.owner_node AND n.lease_until > now()))
                    RETURNING s.epoch""")) {
                s.setString(1, nodeId);
                s.setString(2, sessionId);
                s.setString(3, nodeId);
                s.setString(4, nodeId);
                try (ResultSet r = s.executeQuery()) {
                    return r.next() ? OptionalLong.of(r.getLong(1)) : OptionalLong.empty();
                }
            }
        });
        taken.ifPresent(epoch -> held.put(sessionId, epoch));
        return taken;
    }

    /**
     * The session's owner and epoch ({@code live} false if its lease expired; node and address null if it
     * was released); empty: no such session.
     */
    public Optional<Owner> owner(String sessionId) {
        return db.call("read the owner of session " + sessionId, c -> {
            try (PreparedStatement s = c.prepareStatement(OWNER + " WHERE s.id = ?")) {
                s.setString(1, sessionId);
                try (ResultSet r = s.executeQuery()) {
                    return r.next()
                            ? Optional.of(new Owner(r.getString(2), r.getString(3), r.getLong(4), r.getBoolean(5)))
                            : Optional.empty();
                }
            }
        });
    }

    /** The epoch this node holds the session at (no database call), empty if none. */
    public OptionalLong held(String sessionId) {
        Long epoch = held.get(sessionId);
        return epoch == null ? OptionalLong.empty() : OptionalLong.of(epoch);
    }

    /** Gives the session up ({@code owner_node = null}) if this node holds it; fenced by its epoch. */
    public void release(String sessionId) {
        Long epoch = held.remove(sessionId);
        if (epoch != null) {
            db.call("release session " + sessionId, c -> {
                try (PreparedStatement s = c.prepareStatement("UPDATE rlm_sessions SET owner_node = NULL, "
                        + "updated_at = now() WHERE id = ? AND owner_node = ? AND epoch = ?")) {
                    s.setString(1, sessionId);
                    s.setString(2, nodeId);
                    s.setLong(3, epoch);
                    return s.executeUpdate();
                }
            });
        }
    }

    /** Forgets one session (deleted): nothing to release. */
    void forget(String sessionId) {
        held.remove(sessionId);
    }

    /** Forgets every epoch held (self-fence): every later write about those sessions is refused. */
    public void dropAll() {
        held.clear();
    }

    /** Every session of the cluster with its owner and record, for rlm_sessions. */
    public List<Listed> sessions() {
        return db.call("list the cluster's sessions", c -> {
            List<Listed> all = new ArrayList<>();
            try (PreparedStatement s = c.prepareStatement(OWNER + " ORDER BY s.id");
                    ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    all.add(listed(r));
                }
            }
            return all;
        });
    }

    /** A node and its address if its lease is live (epoch 0). */
    public Optional<Owner> liveNode(String node) {
        return db.call("read node " + node, c -> {
            try (PreparedStatement s =
                    c.prepareStatement("SELECT address FROM rlm_nodes WHERE node_id = ? AND lease_until > now()")) {
                s.setString(1, node);
                try (ResultSet r = s.executeQuery()) {
                    return r.next() ? Optional.of(new Owner(node, r.getString(1), 0, true)) : Optional.empty();
                }
            }
        });
    }

    /** Makes this node the home of a 2025 MCP session (new, or adopted from a node that is gone). */
    public void recordMcpSession(String mcpSessionId, String initializeJson) {
        db.call("record MCP session " + mcpSessionId, c -> {
            try (PreparedStatement s = c.prepareStatement("""
                    INSERT INTO rlm_mcp_sessions (id, node_id, initialize) VALUES (?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET node_id = excluded.node_id,
                        initialize = coalesce(excluded.initialize, rlm_mcp_sessions.initialize)""")) {
                s.setString(1, mcpSessionId);
                s.setString(2, nodeId);
                s.setString(3, initializeJson);
                return s.executeUpdate();
            }
        });
    }

    /** The home of a 2025 MCP session (its {@code live} says whether that node is up), empty if unknown. */
    public Optional<McpHome> mcpSession(String mcpSessionId) {
        return db.call("read MCP session " + mcpSessionId, c -> {
            try (PreparedStatement s = c.prepareStatement("""
                    SELECT m.node_id, n.address, coalesce(n.lease_until > now(), false), m.initialize
                    FROM rlm_mcp_sessions m LEFT JOIN rlm_nodes n ON n.node_id = m.node_id WHERE m.id = ?""")) {
                s.setString(1, mcpSessionId);
                try (ResultSet r = s.executeQuery()) {
                    return r.next()
                            ? Optional.of(new McpHome(
                                    new Owner(r.getString(1), r.getString(2), 0, r.getBoolean(3)), r.getString(4)))
                            : Optional.empty();
                }
            }
        });
    }

    public void forgetMcpSession(String mcpSessionId) {
        update("forget MCP session " + mcpSessionId, "DELETE FROM rlm_mcp_sessions WHERE id = ?", mcpSessionId);
    }

    private void update(String what, String sql, String value) {
        db.call(what, c -> {
            try (PreparedStatement s = c.prepareStatement(sql)) {
                s.setString(1, value);
                return s.executeUpdate();
            }
        });
    }

    private static Listed listed(ResultSet r) throws SQLException {
        String owner = r.getString(2);
        return new Listed(
                r.getString(1),
                owner == null ? null : new Owner(owner, r.getString(3), r.getLong(4), r.getBoolean(5)),
                r.getString(6));
    }
}

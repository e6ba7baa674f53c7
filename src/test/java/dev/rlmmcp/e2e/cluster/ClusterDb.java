package dev.rlmmcp.e2e.cluster;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** The test's own look into the cluster's PostgreSQL tables (rlm_sessions, rlm_nodes, rlm_trace). */
public final class ClusterDb implements AutoCloseable {

    private final String jdbcUrl;
    private Connection connection;

    ClusterDb(String jdbcUrl) {
        this.jdbcUrl = jdbcUrl;
    }

    /** The peer address of the node that owns the session, or null (released, unknown, no table yet). */
    public String ownerAddress(String session) {
        List<String> found = strings(
                "SELECT n.address FROM rlm_sessions s JOIN rlm_nodes n ON n.node_id = s.owner_node WHERE s.id = ?",
                session);
        return found.isEmpty() ? null : found.get(0);
    }

    /** The node id that owns the session, or null. */
    public String ownerNode(String session) {
        List<String> found = strings("SELECT owner_node FROM rlm_sessions WHERE id = ?", session);
        return found.isEmpty() ? null : found.get(0);
    }

    /** The session's row: epoch, snapshot_epoch, snapshot_generation (-1 where null). */
    public long[] epochs(String session) {
        try (PreparedStatement s = connection()
                .prepareStatement("SELECT epoch, snapshot_epoch, snapshot_generation FROM rlm_sessions WHERE id = ?")) {
            s.setString(1, session);
            try (ResultSet rs = s.executeQuery()) {
                if (!rs.next()) {
                    return new long[] {-1, -1, -1};
                }
                return new long[] {value(rs, 1), value(rs, 2), value(rs, 3)};
            }
        } catch (SQLException e) {
            if ("42P01".equals(e.getSQLState())) {
                return new long[] {-1, -1, -1}; // the nodes have not made their tables yet
            }
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    private static long value(ResultSet rs, int column) throws SQLException {
        long v = rs.getLong(column);
        return rs.wasNull() ? -1 : v;
    }

    /** The session's trace entries in order, as stored. */
    public List<String> trace(String session) {
        return strings("SELECT entry FROM rlm_trace WHERE session_id = ? ORDER BY idx", session);
    }

    /** The session's record as stored. */
    public String record(String session) {
        List<String> found = strings("SELECT record FROM rlm_sessions WHERE id = ?", session);
        return found.isEmpty() ? null : found.get(0);
    }

    private synchronized List<String> strings(String sql, String arg) {
        try (PreparedStatement s = connection().prepareStatement(sql)) {
            s.setString(1, arg);
            List<String> out = new ArrayList<>();
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1));
                }
            }
            return out;
        } catch (SQLException e) {
            if ("42P01".equals(e.getSQLState())) {
                return List.of(); // the nodes have not made their tables yet
            }
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
    }

    private synchronized Connection connection() throws SQLException {
        if (connection == null || connection.isClosed() || !connection.isValid(2)) { // PostgreSQL may have restarted
            connection = DriverManager.getConnection(jdbcUrl);
        }
        return connection;
    }

    @Override
    public synchronized void close() throws SQLException {
        if (connection != null) {
            connection.close();
        }
    }
}

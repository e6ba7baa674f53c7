package dev.rlmmcp.store.pg;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * The cluster database's tables, created and migrated by whichever node starts first: each version's
 * statements run once, in one transaction that holds an advisory lock, so nodes starting together
 * do not race; {@code rlm_schema.version} says how far a database is.
 */
final class Schema {

    /** A lock id of our own for pg_advisory_xact_lock ("rlm-mcp" in ASCII). */
    private static final long LOCK = 0x726c6d2d6d6370L;

    /** Version n's statements, separated by ';', are {@code VERSIONS.get(n - 1)}; append, never edit. */
    private static final List<String> VERSIONS = List.of("""
            CREATE TABLE rlm_nodes (node_id text PRIMARY KEY, address text NOT NULL,
                lease_until timestamptz NOT NULL, draining boolean NOT NULL DEFAULT false);
            CREATE TABLE rlm_sessions (id text PRIMARY KEY, owner_node text, epoch bigint NOT NULL,
                record text, snapshot_epoch bigint, snapshot_generation bigint,
                updated_at timestamptz NOT NULL DEFAULT now());
            CREATE INDEX rlm_sessions_owner ON rlm_sessions (owner_node);
            CREATE TABLE rlm_trace (session_id text NOT NULL, idx integer NOT NULL, entry text NOT NULL,
                PRIMARY KEY (session_id, idx));
            CREATE TABLE rlm_mcp_sessions (id text PRIMARY KEY, node_id text NOT NULL, initialize text,
                created_at timestamptz NOT NULL DEFAULT now());
            """);

    private Schema() {}

    /** The schema version this code writes. */
    static int current() {
        return VERSIONS.size();
    }

    /** Brings the database to {@link #current()}; returns the version it had before. */
    static int migrate(Connections db) {
        return db.transaction("create the schema", c -> {
            try (Statement s = c.createStatement()) {
                s.execute("SELECT pg_advisory_xact_lock(" + LOCK + ")");
                s.execute("CREATE TABLE IF NOT EXISTS rlm_schema (version integer NOT NULL)");
            }
            int had = version(c);
            if (had > current()) {
                throw new SQLException("the database has schema version " + had + ", newer than this server's "
                        + current() + ": upgrade this node");
            }
            try (Statement s = c.createStatement()) {
                for (int v = had + 1; v <= current(); v++) {
                    for (String sql : VERSIONS.get(v - 1).split(";")) {
                        if (!sql.isBlank()) {
                            s.execute(sql);
                        }
                    }
                }
                s.execute("DELETE FROM rlm_schema");
                s.execute("INSERT INTO rlm_schema (version) VALUES (" + current() + ")");
            }
            return had;
        });
    }

    private static int version(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT max(version) FROM rlm_schema")) {
            return r.next() ? r.getInt(1) : 0;
        }
    }
}

package dev.rlmmcp.store.pg;

import dev.rlmmcp.store.StoreException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's view of the cluster database: its connections (timeouts of about two seconds, so a
 * partition never blocks a caller for long), the schema (created or migrated at {@link #open}), the
 * leases and ownership ({@link #leases}) and the fenced session database ({@link #sessions}).
 */
public final class PgCluster implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(PgCluster.class);
    private static final int OPEN_ATTEMPTS = 5;

    /** Connections for everything but the heartbeat. */
    private static final int POOL = 16;

    private final Connections db;
    private final Connections heartbeat;
    private final Leases leases;
    private final PgSessionDatabase sessions;

    private PgCluster(Connections db, Connections heartbeat, String nodeId, String nodeAddress) {
        this.db = db;
        this.heartbeat = heartbeat;
        this.leases = new Leases(db, heartbeat, nodeId, nodeAddress);
        this.sessions = new PgSessionDatabase(db, leases);
    }

    /**
     * Connects to {@code url} ({@code postgresql://user:password@host:port/db} or {@code jdbc:postgresql://...})
     * as node {@code nodeId}, which peers reach at {@code nodeAddress}, and creates or migrates the schema.
     * Throws IllegalArgumentException for a malformed URL, StoreException if the database cannot be used.
     */
    public static PgCluster open(String url, String nodeId, String nodeAddress) {
        PgUrl parsed = PgUrl.parse(url);
        Connections db = new Connections(parsed, POOL);
        try {
            int had = migrate(db);
            if (had < Schema.current()) {
                log.info("cluster database {}: schema version {} created (was {})", parsed, Schema.current(), had);
            }
            log.info("cluster database {}: this is node {} at {}", parsed, nodeId, nodeAddress);
            // the heartbeat has a connection of its own: a busy pool must not make a node fence itself
            return new PgCluster(db, new Connections(parsed, 1), nodeId, nodeAddress);
        } catch (RuntimeException e) {
            db.close();
            throw e;
        }
    }

    /** Migrates, trying again a few times: nodes starting together wait for each other's migration. */
    private static int migrate(Connections db) {
        for (int attempt = 1; ; attempt++) {
            try {
                return Schema.migrate(db);
            } catch (StoreException e) {
                if (attempt == OPEN_ATTEMPTS) {
                    throw e;
                }
                try {
                    Thread.sleep(200L * attempt);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /** The fenced session database (records, traces, snapshot pointers). */
    public PgSessionDatabase sessions() {
        return sessions;
    }

    public Leases leases() {
        return leases;
    }

    @Override
    public void close() {
        heartbeat.close();
        db.close();
    }
}

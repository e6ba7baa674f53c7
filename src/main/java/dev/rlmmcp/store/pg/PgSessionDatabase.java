package dev.rlmmcp.store.pg;

import dev.rlmmcp.store.ClusterSessionDatabase;
import dev.rlmmcp.store.SessionDatabase;
import dev.rlmmcp.store.StoreException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's sessions in PostgreSQL. Every write about a session is fenced: its first statement
 * changes the session's row only {@code WHERE owner_node = <this node> AND epoch = <the epoch held
 * here>} (and this node's lease is live), which also locks the row until the write commits, so a
 * takeover (which bumps the epoch) waits for it or makes it change nothing. A refused write throws
 * {@link StoreException} and is logged once per session. Reads are not fenced. {@link #records} lists
 * the sessions this node owns (a fresh node owns none); the whole cluster is in {@link Leases#sessions}.
 */
public final class PgSessionDatabase implements ClusterSessionDatabase {

    private static final Logger log = LoggerFactory.getLogger(PgSessionDatabase.class);

    private final Connections db;
    private final Leases leases;
    /** The connection of the batch {@link #inOneTransaction} runs on this thread, if any. */
    private final ThreadLocal<Connection> batch = new ThreadLocal<>();

    private final Set<String> reportedFenced = ConcurrentHashMap.newKeySet();

    PgSessionDatabase(Connections db, Leases leases) {
        this.db = db;
        this.leases = leases;
    }

    @Override
    public void save(String id, String record) {
        write("save session " + id, c -> fenced(c, id, "its record", "record = ?", record(record)));
    }

    @Override
    public void append(String id, String record, int index, String entry, int keep) {
        write("record a step of session " + id, c -> {
            fenced(c, id, "a step's trace entry", "record = ?", record(record));
            try (PreparedStatement s = c.prepareStatement("INSERT INTO rlm_trace (session_id, idx, entry) "
                    + "VALUES (?, ?, ?) ON CONFLICT (session_id, idx) DO UPDATE SET entry = excluded.entry")) {
                s.setString(1, id);
                s.setInt(2, index);
                s.setString(3, entry);
                s.executeUpdate();
            }
            if (index >= keep && index % 1000 == 0) {
                try (PreparedStatement s =
                        c.prepareStatement("DELETE FROM rlm_trace WHERE session_id = ? AND idx <= ?")) {
                    s.setString(1, id);
                    s.setInt(2, index - keep);
                    s.executeUpdate();
                }
            }
            return null;
        });
    }

    @Override
    public void delete(String id) {
        write("delete session " + id, c -> {
            long epoch = heldOrRefuse(id, "its deletion");
            try (PreparedStatement s = c.prepareStatement("DELETE FROM rlm_sessions WHERE id = ? AND owner_node = ? "
                    + "AND epoch = ? AND " + Leases.ME_LIVE)) {
                s.setString(1, id);
                s.setString(2, leases.nodeId());
                s.setLong(3, epoch);
                s.setString(4, leases.nodeId());
                if (s.executeUpdate() == 0) {
                    throw refused(id, "its deletion");
                }
            }
            try (PreparedStatement s = c.prepareStatement("DELETE FROM rlm_trace WHERE session_id = ?")) {
                s.setString(1, id);
                s.executeUpdate();
            }
            return null;
        });
        leases.forget(id);
    }

    @Override
    public Optional<StoredSession> find(String id, int keep) {
        return db.call("read session " + id, c -> {
            try (PreparedStatement s = c.prepareStatement("SELECT record FROM rlm_sessions WHERE id = ?")) {
                s.setString(1, id);
                try (ResultSet r = s.executeQuery()) {
                    String record = r.next() ? r.getString(1) : null;
                    return record == null
                            ? Optional.<StoredSession>empty()
                            : Optional.of(new StoredSession(id, record, entries(c, id, keep)));
                }
            }
        });
    }

    /**
     * A session taken over from another node: its record and trace are here already (they came from
     * this database), so only the record is written again, fenced, which checks the takeover took.
     */
    @Override
    public void adopt(StoredSession session) {
        save(session.id(), session.record());
    }

    /** The records of the sessions this node owns. */
    @Override
    public List<StoredRecord> records() {
        return db.call("read this node's sessions", c -> {
            List<StoredRecord> mine = new ArrayList<>();
            try (PreparedStatement s = c.prepareStatement(
                    "SELECT id, record FROM rlm_sessions WHERE owner_node = ? AND record IS NOT NULL")) {
                s.setString(1, leases.nodeId());
                try (ResultSet r = s.executeQuery()) {
                    while (r.next()) {
                        mine.add(new StoredRecord(r.getString(1), r.getString(2)));
                    }
                }
            }
            return mine;
        });
    }

    @Override
    public List<String> trace(String id, int keep) {
        return db.call("read the trace of session " + id, c -> entries(c, id, keep));
    }

    @Override
    public void inOneTransaction(List<? extends Consumer<SessionDatabase>> writes) {
        db.transaction("commit " + writes.size() + " writes", c -> {
            batch.set(c);
            try {
                writes.forEach(w -> w.accept(this));
            } finally {
                batch.remove();
            }
            return null;
        });
    }

    @Override
    public OptionalLong epoch(String sessionId) {
        return leases.held(sessionId);
    }

    @Override
    public Optional<Pointer> pointer(String sessionId) {
        return db.call("read the snapshot pointer of session " + sessionId, c -> {
            try (PreparedStatement s = c.prepareStatement("SELECT snapshot_epoch, snapshot_generation "
                    + "FROM rlm_sessions WHERE id = ? AND snapshot_epoch IS NOT NULL")) {
                s.setString(1, sessionId);
                try (ResultSet r = s.executeQuery()) {
                    return r.next() ? Optional.of(new Pointer(r.getLong(1), r.getLong(2))) : Optional.empty();
                }
            }
        });
    }

    @Override
    public boolean known(String sessionId) {
        return db.call("look up session " + sessionId, c -> {
            try (PreparedStatement s = c.prepareStatement("SELECT 1 FROM rlm_sessions WHERE id = ?")) {
                s.setString(1, sessionId);
                try (ResultSet r = s.executeQuery()) {
                    return r.next();
                }
            }
        });
    }

    @Override
    public void point(String sessionId, Pointer pointer) {
        write("point session " + sessionId + " at its snapshot", c -> {
            if (heldOrRefuse(sessionId, "its snapshot pointer") != pointer.epoch()) {
                throw refused(sessionId, "its snapshot pointer");
            }
            return fenced(c, sessionId, "its snapshot pointer", "snapshot_epoch = ?, snapshot_generation = ?", s -> {
                s.setLong(1, pointer.epoch());
                s.setLong(2, pointer.generation());
                return 2;
            });
        });
    }

    /** Nothing to close: the connections belong to {@link PgCluster}. */
    @Override
    public void close() {}

    /** Binds the parameters of a fenced update's assignments; returns how many it bound. */
    @FunctionalInterface
    private interface Values {
        int bind(PreparedStatement s) throws SQLException;
    }

    /** Sets {@code assignments} on the session's row if this node holds it at the database's epoch; else refuses. */
    private Void fenced(Connection c, String id, String what, String assignments, Values values) throws SQLException {
        long epoch = heldOrRefuse(id, what);
        try (PreparedStatement s = c.prepareStatement("UPDATE rlm_sessions SET " + assignments + ", updated_at = now() "
                + "WHERE id = ? AND owner_node = ? AND epoch = ? AND " + Leases.ME_LIVE)) {
            int n = values.bind(s);
            s.setString(n + 1, id);
            s.setString(n + 2, leases.nodeId());
            s.setLong(n + 3, epoch);
            s.setString(n + 4, leases.nodeId());
            if (s.executeUpdate() == 0) {
                throw refused(id, what);
            }
        }
        return null;
    }

    private static Values record(String record) {
        return s -> {
            s.setString(1, record);
            return 1;
        };
    }

    private long heldOrRefuse(String id, String what) {
        return leases.held(id).orElseThrow(() -> refused(id, what));
    }

    private StoreException refused(String id, String what) {
        leases.forget(id); // the epoch held is stale: the next request for the session asks the database again
        if (reportedFenced.add(id)) {
            log.warn("session {}: {} not written: this node no longer owns it (fenced)", id, what);
        }
        return new StoreException(
                "session " + id + " is owned by another node now: " + what + " was not written", null);
    }

    /** Runs a write on this thread's batch, or else in a transaction of its own. */
    private <T> T write(String what, Connections.Work<T> work) {
        Connection c = batch.get();
        if (c == null) {
            return db.transaction(what, work);
        }
        try {
            return work.on(c);
        } catch (SQLException e) {
            throw new StoreException("cannot " + what + " in the cluster database: " + e.getMessage(), e);
        }
    }

    private static List<String> entries(Connection c, String id, int keep) throws SQLException {
        List<String> entries = new ArrayList<>();
        try (PreparedStatement s = c.prepareStatement("SELECT entry FROM (SELECT idx, entry FROM rlm_trace "
                + "WHERE session_id = ? ORDER BY idx DESC LIMIT ?) t ORDER BY idx")) {
            s.setString(1, id);
            s.setInt(2, keep);
            try (ResultSet r = s.executeQuery()) {
                while (r.next()) {
                    entries.add(r.getString(1));
                }
            }
        }
        return entries;
    }
}

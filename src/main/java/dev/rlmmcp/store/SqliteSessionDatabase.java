package dev.rlmmcp.store;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/**
 * Sessions and their traces in SQLite: one row per session holding its record as JSON, one row
 * per trace entry holding the entry as JSON, so new fields need no schema change. WAL with
 * synchronous=NORMAL: every committed transaction survives a killed process.
 */
public final class SqliteSessionDatabase implements SessionDatabase {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static final String SAVE =
            "INSERT INTO sessions (id, record) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET record = excluded.record";
    private static final String ADD_ENTRY = "INSERT OR REPLACE INTO trace (session_id, idx, entry) VALUES (?, ?, ?)";

    private final Connection db;
    /** The writes' statements, compiled once: SQLite would otherwise compile each for every step recorded. */
    private final Map<String, PreparedStatement> prepared = new HashMap<>();
    /** Inside {@link #inOneTransaction}: each write's own transaction joins the batch's. */
    private boolean batching;

    private SqliteSessionDatabase(Connection db) {
        this.db = db;
    }

    public static SqliteSessionDatabase open(Path file) {
        SQLiteConfig config = new SQLiteConfig();
        config.setJournalMode(SQLiteConfig.JournalMode.WAL);
        config.setSynchronous(SQLiteConfig.SynchronousMode.NORMAL);
        config.setBusyTimeout(10_000);
        SQLiteDataSource source = new SQLiteDataSource(config);
        source.setUrl("jdbc:sqlite:" + file.toAbsolutePath());
        try {
            Connection db = source.getConnection();
            try (Statement s = db.createStatement()) {
                s.execute("CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, record TEXT NOT NULL)");
                s.execute("CREATE TABLE IF NOT EXISTS trace (session_id TEXT NOT NULL, idx INTEGER NOT NULL, "
                        + "entry TEXT NOT NULL, PRIMARY KEY (session_id, idx)) WITHOUT ROWID");
            }
            return new SqliteSessionDatabase(db);
        } catch (SQLException e) {
            throw new StoreException("cannot open the session database " + file + ": " + e.getMessage(), e);
        }
    }

    @Override
    public synchronized void save(String id, String record) {
        try {
            PreparedStatement s = prepared(SAVE);
            s.setString(1, id);
            s.setString(2, record);
            s.executeUpdate();
        } catch (SQLException e) {
            throw new StoreException("cannot save session " + id + ": " + e.getMessage(), e);
        }
    }

    /** A new trace entry and the session record after it, in one transaction; keeps the last {@code keep} entries. */
    @Override
    public synchronized void append(String id, String record, int index, String entry, int keep) {
        try {
            begin();
            PreparedStatement add = prepared(ADD_ENTRY);
            add.setString(1, id);
            add.setInt(2, index);
            add.setString(3, entry);
            add.executeUpdate();
            if (index >= keep && index % 1000 == 0) {
                try (PreparedStatement s = db.prepareStatement("DELETE FROM trace WHERE session_id = ? AND idx <= ?")) {
                    s.setString(1, id);
                    s.setInt(2, index - keep);
                    s.executeUpdate();
                }
            }
            PreparedStatement save = prepared(SAVE);
            save.setString(1, id);
            save.setString(2, record);
            save.executeUpdate();
            commit();
        } catch (SQLException e) {
            undo();
            throw new StoreException("cannot record a step of session " + id + ": " + e.getMessage(), e);
        } finally {
            end();
        }
    }

    @Override
    public synchronized void delete(String id) {
        try {
            begin();
            for (String sql : List.of("DELETE FROM trace WHERE session_id = ?", "DELETE FROM sessions WHERE id = ?")) {
                try (PreparedStatement s = db.prepareStatement(sql)) {
                    s.setString(1, id);
                    s.executeUpdate();
                }
            }
            commit();
        } catch (SQLException e) {
            undo();
            throw new StoreException("cannot delete session " + id + ": " + e.getMessage(), e);
        } finally {
            end();
        }
    }

    /** One stored session with its last {@code keep} trace entries, if there is one. */
    @Override
    public synchronized Optional<StoredSession> find(String id, int keep) {
        try (PreparedStatement s = db.prepareStatement("SELECT record FROM sessions WHERE id = ?")) {
            s.setString(1, id);
            try (ResultSet rows = s.executeQuery()) {
                return rows.next()
                        ? Optional.of(new StoredSession(id, rows.getString(1), entries(id, keep)))
                        : Optional.empty();
            }
        } catch (SQLException e) {
            throw new StoreException("cannot read session " + id + ": " + e.getMessage(), e);
        }
    }

    /**
     * Takes in a session stored elsewhere (another node's snapshot store), replacing any row of the
     * same id, in one transaction. Each trace entry carries its own {@code index}.
     */
    @Override
    public synchronized void adopt(StoredSession session) {
        try {
            begin();
            try (PreparedStatement s = db.prepareStatement("DELETE FROM trace WHERE session_id = ?")) {
                s.setString(1, session.id());
                s.executeUpdate();
            }
            try (PreparedStatement s = db.prepareStatement(ADD_ENTRY)) {
                for (String entry : session.trace()) {
                    s.setString(1, session.id());
                    s.setInt(2, JSON.readTree(entry).path("index").asInt());
                    s.setString(3, entry);
                    s.addBatch();
                }
                s.executeBatch();
            }
            PreparedStatement save = prepared(SAVE);
            save.setString(1, session.id());
            save.setString(2, session.record());
            save.executeUpdate();
            commit();
        } catch (SQLException | java.io.IOException e) {
            undo();
            throw new StoreException("cannot take in session " + session.id() + ": " + e.getMessage(), e);
        } finally {
            end();
        }
    }

    /** Every stored session's record, without its trace (read with {@link #trace} when wanted). */
    @Override
    public synchronized List<StoredRecord> records() {
        List<StoredRecord> sessions = new ArrayList<>();
        try (Statement s = db.createStatement();
                ResultSet rows = s.executeQuery("SELECT id, record FROM sessions")) {
            while (rows.next()) {
                sessions.add(new StoredRecord(rows.getString(1), rows.getString(2)));
            }
        } catch (SQLException e) {
            throw new StoreException("cannot read the session database: " + e.getMessage(), e);
        }
        return sessions;
    }

    /** The last {@code keep} trace entries of a session, oldest first. */
    @Override
    public synchronized List<String> trace(String id, int keep) {
        try {
            return entries(id, keep);
        } catch (SQLException e) {
            throw new StoreException("cannot read the trace of session " + id + ": " + e.getMessage(), e);
        }
    }

    private List<String> entries(String id, int keep) throws SQLException {
        List<String> entries = new ArrayList<>();
        try (PreparedStatement s = db.prepareStatement(
                "SELECT entry FROM (SELECT idx, entry FROM trace WHERE session_id = ? ORDER BY idx DESC LIMIT ?) ORDER BY idx")) {
            s.setString(1, id);
            s.setInt(2, keep);
            try (ResultSet rows = s.executeQuery()) {
                while (rows.next()) {
                    entries.add(rows.getString(1));
                }
            }
        }
        return entries;
    }

    @Override
    public synchronized void inOneTransaction(List<? extends java.util.function.Consumer<SessionDatabase>> writes) {
        try {
            db.setAutoCommit(false);
            batching = true;
            writes.forEach(write -> write.accept(this));
            batching = false;
            db.commit();
        } catch (SQLException | StoreException e) {
            batching = false;
            rollback();
            throw e instanceof StoreException store
                    ? store
                    : new StoreException("cannot commit " + writes.size() + " writes: " + e.getMessage(), e);
        } finally {
            batching = false;
            autoCommit();
        }
    }

    private PreparedStatement prepared(String sql) throws SQLException {
        PreparedStatement statement = prepared.get(sql);
        if (statement == null) {
            statement = db.prepareStatement(sql);
            prepared.put(sql, statement);
        }
        return statement;
    }

    private void begin() throws SQLException {
        if (!batching) {
            db.setAutoCommit(false);
        }
    }

    private void commit() throws SQLException {
        if (!batching) {
            db.commit();
        }
    }

    private void undo() {
        if (!batching) {
            rollback();
        }
    }

    private void end() {
        if (!batching) {
            autoCommit();
        }
    }

    private void rollback() {
        try {
            db.rollback();
        } catch (SQLException ignored) {
            // the failure being reported matters more
        }
    }

    private void autoCommit() {
        try {
            db.setAutoCommit(true);
        } catch (SQLException ignored) {
            // the connection is broken; the next call reports it
        }
    }

    @Override
    public synchronized void close() {
        try {
            for (PreparedStatement statement : prepared.values()) {
                statement.close();
            }
            db.close();
        } catch (SQLException ignored) {
            // closing at shutdown: nothing left to do
        }
    }
}

package dev.rlmmcp.store;

import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Where sessions and their traces are kept: each session's record as JSON and its trace entries as
 * JSON, so new fields need no schema change. One node's SQLite file ({@link SqliteSessionDatabase},
 * the default) or the cluster's PostgreSQL ({@code dev.rlmmcp.store.pg}), whose writes are fenced by
 * the session's owner and epoch. A refused or failed write throws {@link StoreException}.
 */
public interface SessionDatabase extends AutoCloseable {

    /** A session as stored: its record and its last trace entries, oldest first. */
    record StoredSession(String id, String record, List<String> trace) {}

    /** A stored session's record alone. */
    record StoredRecord(String id, String record) {}

    /** How many trace entries a session keeps. */
    int TRACE_KEPT = 10_000;

    /** Stores a session's record, replacing the one before. */
    void save(String id, String record);

    /** A new trace entry and the session record after it, in one transaction; keeps the last {@code keep} entries. */
    void append(String id, String record, int index, String entry, int keep);

    /** Removes a session and its trace. */
    void delete(String id);

    /** One stored session with its last {@code keep} trace entries, if there is one. */
    Optional<StoredSession> find(String id, int keep);

    /**
     * Takes in a session stored elsewhere (another node's snapshot store), replacing any row of the
     * same id, in one transaction. Each trace entry carries its own {@code index}.
     */
    void adopt(StoredSession session);

    /** Every stored session's record, without its trace (read with {@link #trace} when wanted). */
    List<StoredRecord> records();

    /** The last {@code keep} trace entries of a session, oldest first. */
    List<String> trace(String id, int keep);

    /**
     * Runs {@code writes} as one transaction: one commit for them all. If one fails, none is kept and
     * the failure is thrown; the caller may then run them one by one.
     */
    void inOneTransaction(List<? extends Consumer<SessionDatabase>> writes);

    @Override
    void close();
}

package dev.rlmmcp.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StateStoreTest {

    @TempDir
    Path dir;

    @Test
    void aBusySessionsStepsAreCommittedTogetherAndAFlushWaitsForAllOfThem() {
        Counting db = new Counting(SqliteSessionDatabase.open(dir.resolve("s.db")));
        try (StateStore store =
                new StateStore(dir, db, new DirectorySnapshotStore(dir.resolve("snapshots")), Duration.ofHours(1))) {
            for (int i = 0; i < 500; i++) {
                int index = i;
                store.write(
                        "step " + i,
                        d -> d.append("s", "{\"steps\":" + index + "}", index, "{\"index\":" + index + "}", 1000));
            }
            store.flush();
            assertThat(db.trace("s", 1000)).hasSize(500).last().isEqualTo("{\"index\":499}");
            assertThat(db.records())
                    .singleElement()
                    .extracting(SessionDatabase.StoredRecord::record)
                    .isEqualTo("{\"steps\":499}");
            assertThat(db.transactions.get())
                    .as("transactions for 500 steps queued at once")
                    .isLessThan(50);
        }
    }

    @Test
    void whatIsQueuedWhenTheStoreClosesIsCommitted() {
        try (StateStore store = new StateStore(
                dir,
                SqliteSessionDatabase.open(dir.resolve("s.db")),
                new DirectorySnapshotStore(dir.resolve("snapshots")),
                Duration.ofHours(1))) {
            store.write("step", d -> d.append("s", "{}", 0, "{\"index\":0}", 10));
            store.write("step", d -> d.append("s", "{}", 1, "{\"index\":1}", 10));
        }
        try (SessionDatabase db = SqliteSessionDatabase.open(dir.resolve("s.db"))) {
            assertThat(db.trace("s", 10)).containsExactly("{\"index\":0}", "{\"index\":1}");
        }
    }

    /** The SQLite database, counting the transactions the store's writer commits. */
    private static final class Counting implements SessionDatabase {
        private final SessionDatabase db;
        final AtomicInteger transactions = new AtomicInteger();

        Counting(SessionDatabase db) {
            this.db = db;
        }

        @Override
        public void inOneTransaction(List<? extends Consumer<SessionDatabase>> writes) {
            transactions.incrementAndGet();
            db.inOneTransaction(writes);
        }

        @Override
        public void save(String id, String record) {
            db.save(id, record);
        }

        @Override
        public void append(String id, String record, int index, String entry, int keep) {
            db.append(id, record, index, entry, keep);
        }

        @Override
        public void delete(String id) {
            db.delete(id);
        }

        @Override
        public Optional<StoredSession> find(String id, int keep) {
            return db.find(id, keep);
        }

        @Override
        public void adopt(StoredSession session) {
            db.adopt(session);
        }

        @Override
        public List<StoredRecord> records() {
            return db.records();
        }

        @Override
        public List<String> trace(String id, int keep) {
            return db.trace(id, keep);
        }

        @Override
        public void close() {
            db.close();
        }
    }
}

package dev.rlmmcp.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SessionDatabaseTest {

    @TempDir
    Path dir;

    @Test
    void sessionsAndTheirTraceComeBackFromAnotherConnection() {
        try (SessionDatabase db = SqliteSessionDatabase.open(dir.resolve("s.db"))) {
            db.save("s-1", "{\"v\":1}");
            db.append("s-1", "{\"v\":2}", 0, "{\"index\":0}", 10);
            db.append("s-1", "{\"v\":3}", 1, "{\"index\":1}", 10);
            db.save("s-2", "{\"v\":9}");
        }
        try (SessionDatabase db = SqliteSessionDatabase.open(dir.resolve("s.db"))) {
            List<SessionDatabase.StoredRecord> all = db.records();
            assertThat(all).extracting(SessionDatabase.StoredRecord::id).containsExactlyInAnyOrder("s-1", "s-2");
            SessionDatabase.StoredRecord one =
                    all.stream().filter(s -> s.id().equals("s-1")).findFirst().orElseThrow();
            assertThat(one.record()).isEqualTo("{\"v\":3}");
            assertThat(db.trace("s-1", 10)).containsExactly("{\"index\":0}", "{\"index\":1}");
            assertThat(db.trace("s-2", 10)).isEmpty();
            db.delete("s-1");
            assertThat(db.records())
                    .extracting(SessionDatabase.StoredRecord::id)
                    .containsExactly("s-2");
            assertThat(db.trace("s-1", 10)).isEmpty();
        }
    }

    @Test
    void aBatchThatFailsLeavesNothingAndTheNextWritesWork() {
        try (SessionDatabase db = SqliteSessionDatabase.open(dir.resolve("s.db"))) {
            db.append("s", "{\"v\":0}", 0, "{\"index\":0}", 10);
            List<Consumer<SessionDatabase>> batch =
                    List.of(d -> d.append("s", "{\"v\":1}", 1, "{\"index\":1}", 10), d -> {
                        throw new StoreException("disk full", null);
                    });
            assertThatThrownBy(() -> db.inOneTransaction(batch)).isInstanceOf(StoreException.class);
            assertThat(db.trace("s", 10)).containsExactly("{\"index\":0}");
            db.append("s", "{\"v\":2}", 2, "{\"index\":2}", 10);
            db.save("t", "{\"v\":3}");
            assertThat(db.trace("s", 10)).containsExactly("{\"index\":0}", "{\"index\":2}");
            assertThat(db.records())
                    .extracting(SessionDatabase.StoredRecord::record)
                    .containsExactlyInAnyOrder("{\"v\":2}", "{\"v\":3}");
        }
    }

    @Test
    void onlyTheLastEntriesAreLoadedAndOldOnesAreTrimmed() {
        try (SessionDatabase db = SqliteSessionDatabase.open(dir.resolve("s.db"))) {
            for (int i = 0; i <= 2000; i++) {
                db.append("s", "{}", i, "{\"index\":" + i + "}", 500);
            }
            assertThat(db.trace("s", 3)).containsExactly("{\"index\":1998}", "{\"index\":1999}", "{\"index\":2000}");
            assertThat(db.trace("s", 5000)).hasSizeLessThan(1600).last().isEqualTo("{\"index\":2000}");
        }
    }

    @Test
    void aSessionFromElsewhereIsTakenInWholeReplacingWhatWasThere() {
        try (SessionDatabase db = SqliteSessionDatabase.open(dir.resolve("s.db"))) {
            assertThat(db.find("s-9", 10)).isEmpty();
            db.append("s-9", "{\"v\":1}", 0, "{\"index\":0,\"old\":true}", 10);
            db.append("s-9", "{\"v\":1}", 5, "{\"index\":5,\"old\":true}", 10);
            db.adopt(new SessionDatabase.StoredSession(
                    "s-9", "{\"v\":7}", List.of("{\"index\":3,\"input\":\"a\"}", "{\"index\":4,\"input\":\"b\"}")));
            SessionDatabase.StoredSession found = db.find("s-9", 10).orElseThrow();
            assertThat(found.record()).isEqualTo("{\"v\":7}");
            assertThat(found.trace()).containsExactly("{\"index\":3,\"input\":\"a\"}", "{\"index\":4,\"input\":\"b\"}");
            assertThat(db.find("s-9", 1).orElseThrow().trace()).containsExactly("{\"index\":4,\"input\":\"b\"}");
        }
    }
}

package dev.rlmmcp.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DirectorySnapshotStoreTest {

    @TempDir
    Path dir;

    @Test
    void eachSessionHasItsOwnDirectoryUntilDeleted() throws Exception {
        DirectorySnapshotStore store = new DirectorySnapshotStore(dir);
        Path one = store.checkout("s-1");
        Files.writeString(one.resolve("x.1"), "data");
        assertThat(store.checkout("s-1")).isEqualTo(one);
        assertThat(store.checkout("s-2")).isNotEqualTo(one);
        store.delete("s-1");
        assertThat(one).doesNotExist();
        assertThat(dir.resolve("s-2")).exists();
    }

    @Test
    void aSessionIdCannotReachOutsideTheStore() {
        DirectorySnapshotStore store = new DirectorySnapshotStore(dir);
        assertThatThrownBy(() -> store.checkout("../etc")).isInstanceOf(IllegalArgumentException.class);
    }
}

package dev.rlmmcp.transport.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PortFileTest {

    @TempDir
    Path dir;

    @Test
    void writesThePortOwnerOnlyAndRemovesItOnClose() throws Exception {
        Path path = dir.resolve("nested/rlm.port");
        try (PortFile file = PortFile.write(path, 43210)) {
            assertThat(Files.readString(path)).isEqualTo("43210\n");
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(path)))
                    .isEqualTo("rw-------");
            assertThat(file.path()).isEqualTo(path.toAbsolutePath());
        }
        assertThat(path).doesNotExist();
        try (var leftovers = Files.list(path.getParent())) {
            assertThat(leftovers).isEmpty();
        }
    }

    @Test
    void replacesAStaleFile() throws Exception {
        Path path = dir.resolve("rlm.port");
        Files.writeString(path, "1\n");
        try (PortFile file = PortFile.write(path, 2)) {
            assertThat(Files.readString(path)).isEqualTo("2\n");
        }
    }
}

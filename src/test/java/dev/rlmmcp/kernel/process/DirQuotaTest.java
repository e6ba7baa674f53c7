package dev.rlmmcp.kernel.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How the watcher measures a directory a kernel writes. */
class DirQuotaTest {

    @TempDir
    Path dir;

    @Test
    void sizesRoundUpToBlocksAHardLinkCountsOnceASparseFileAtItsSizeAndLinksAreNotFollowed() throws Exception {
        Path big = Files.write(Files.createDirectories(dir.resolve("elsewhere")).resolve("big"), new byte[1 << 20]);
        Path watched = Files.createDirectories(dir.resolve("w"));
        long base = DirQuota.usage(watched, Long.MAX_VALUE);
        assertThat(base).isEqualTo(DirQuota.BLOCK);  // the directory itself
        Files.writeString(watched.resolve("a"), "x");
        Files.createLink(watched.resolve("a-again"), watched.resolve("a"));
        Files.createFile(watched.resolve("empty"));
        Files.createSymbolicLink(watched.resolve("link"), big.getParent());
        try (RandomAccessFile sparse = new RandomAccessFile(watched.resolve("sparse").toFile(), "rw")) {
            sparse.setLength(10L << 20);
        }
        long expected = base + DirQuota.BLOCK /* a */ + DirQuota.BLOCK /* empty */ + DirQuota.BLOCK /* link */ + (10L << 20);
        assertThat(DirQuota.usage(watched, Long.MAX_VALUE)).isEqualTo(expected);
        assertThat(DirQuota.usage(watched, 1 << 20)).isGreaterThan(1 << 20).isLessThanOrEqualTo(expected);
    }
}

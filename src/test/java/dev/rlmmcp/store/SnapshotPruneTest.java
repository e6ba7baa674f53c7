package dev.rlmmcp.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A snapshot directory a kernel filled past its limit, cut back to what its manifest names. */
class SnapshotPruneTest {

    @TempDir
    Path dir;

    @Test
    void keepsTheManifestAndItsFilesAtTheirSizesAndRemovesTheRestWithoutFollowingLinks() throws Exception {
        Path outside = Files.writeString(
                Files.createDirectories(dir.resolve("outside")).resolve("keep"), "host");
        Path snap = Files.createDirectories(dir.resolve("snap"));
        Files.writeString(
                snap.resolve("manifest.json"),
                "{\"variables\": {\"a\": {\"file\": \"a.1\", \"lengths\": [3, 2]}, \"b\": {\"file\": \"b.1\", \"lengths\": [4]},"
                        + " \"f\": {\"kind\": \"code\"}}}");
        Files.writeString(snap.resolve("a.1"), "12345");
        Files.writeString(snap.resolve("b.1"), "overwritten with more");
        Files.writeString(snap.resolve("junk"), "x".repeat(1000));
        Files.createDirectories(snap.resolve("sub/deeper"));
        Files.createSymbolicLink(snap.resolve("sub/link"), outside.getParent());

        long kept = SnapshotPrune.prune(snap, 1 << 20);

        try (var left = Files.list(snap)) {
            assertThat(left.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("manifest.json", "a.1");
        }
        assertThat(kept).isEqualTo(5 + Files.size(snap.resolve("manifest.json")));
        assertThat(Files.readString(outside)).isEqualTo("host");
    }

    @Test
    void aManifestNamingMoreThanTheLimitEmptiesTheDirectory() throws Exception {
        Path snap = Files.createDirectories(dir.resolve("snap"));
        Files.writeString(
                snap.resolve("manifest.json"), "{\"variables\": {\"a\": {\"file\": \"a.1\", \"lengths\": [5000]}}}");
        Files.write(snap.resolve("a.1"), new byte[5000]);
        assertThat(SnapshotPrune.prune(snap, 4096)).isZero();
        try (var left = Files.list(snap)) {
            assertThat(left).isEmpty();
        }
    }

    @Test
    void noSaneManifestKeepsNothing() throws Exception {
        Path snap = Files.createDirectories(dir.resolve("snap"));
        Files.createSymbolicLink(snap.resolve("manifest.json"), dir.resolve("elsewhere.json"));
        Files.writeString(
                dir.resolve("elsewhere.json"), "{\"variables\": {\"a\": {\"file\": \"a.1\", \"lengths\": [1]}}}");
        Files.writeString(snap.resolve("a.1"), "x");
        SnapshotPrune.prune(snap, 1 << 20);
        try (var left = Files.list(snap)) {
            assertThat(left).isEmpty();
        }
        assertThat(dir.resolve("elsewhere.json")).exists();
    }
}

package dev.rlmmcp.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SpareDirectoriesTest {

    @TempDir
    Path root;

    @Test
    void aSpareBecomesANewSessionsDirectoryAsTheSameDirectory() throws Exception {
        Path spare = SpareDirectories.create(root);
        Object inode = Files.readAttributes(spare, "unix:ino").get("ino");
        Path dir = SpareDirectories.adopt(spare, root.resolve("s1"));
        assertThat(dir).isEqualTo(root.resolve("s1"));
        assertThat(Files.readAttributes(dir, "unix:ino").get("ino")).isEqualTo(inode);
        assertThat(spare).doesNotExist();
    }

    @Test
    void anEmptyDirectoryMadeForTheSessionIsReplaced() throws Exception {
        Files.createDirectory(root.resolve("s1"));
        Path spare = SpareDirectories.create(root);
        Object inode = Files.readAttributes(spare, "unix:ino").get("ino");
        SpareDirectories.adopt(spare, root.resolve("s1"));
        assertThat(Files.readAttributes(root.resolve("s1"), "unix:ino").get("ino"))
                .isEqualTo(inode);
    }

    @Test
    void aSnapshotToRestoreMovesIntoTheSpareLinksNotFollowed() throws Exception {
        Path dir = Files.createDirectory(root.resolve("s1"));
        Files.writeString(dir.resolve("manifest.json"), "{}");
        Files.writeString(dir.resolve("x.pickle"), "data");
        Path outside = Files.writeString(root.resolve("outside"), "not the session's");
        Files.createSymbolicLink(dir.resolve("planted"), outside);
        Path spare = SpareDirectories.create(root);
        Object inode = Files.readAttributes(spare, "unix:ino").get("ino");

        SpareDirectories.adopt(spare, dir);

        assertThat(Files.readAttributes(dir, "unix:ino").get("ino")).isEqualTo(inode);
        assertThat(dir.resolve("manifest.json")).hasContent("{}");
        assertThat(dir.resolve("x.pickle")).hasContent("data");
        assertThat(Files.readSymbolicLink(dir.resolve("planted"))).isEqualTo(outside);
        assertThat(outside).hasContent("not the session's");
        assertThat(root.resolve("s1.claim")).doesNotExist();
    }

    @Test
    void aClaimCutShortIsFinishedBeforeTheNextAndAtStartUp() throws Exception {
        // a crash after the spare was renamed and half the files moved
        Path dir = Files.createDirectory(root.resolve("s1"));
        Files.writeString(dir.resolve("a"), "a");
        Path claim = Files.createDirectory(root.resolve("s1.claim"));
        Files.writeString(claim.resolve("manifest.json"), "{}");
        SpareDirectories.clean(root);
        assertThat(claim).doesNotExist();
        assertThat(dir.resolve("a")).hasContent("a");
        assertThat(dir.resolve("manifest.json")).hasContent("{}");

        // and a crash after every file moved, before the last rename
        Files.move(dir, root.resolve("s2.claim"));
        SpareDirectories.adopt(SpareDirectories.create(root), root.resolve("s2"));
        assertThat(root.resolve("s2").resolve("manifest.json")).hasContent("{}");
        assertThat(root.resolve("s2.claim")).doesNotExist();
    }

    @Test
    void startUpRemovesTheSparesAnEarlierServerLeft() throws Exception {
        Path spare = SpareDirectories.create(root);
        Files.writeString(spare.resolve("junk"), "x");
        SpareDirectories.clean(root);
        assertThat(root.resolve(".warm")).doesNotExist();
        assertThat(Files.exists(spare, LinkOption.NOFOLLOW_LINKS)).isFalse();
    }
}

package dev.rlmmcp.base;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;

/** Directory trees that something untrusted (a kernel) could write. */
public final class FileTrees {

    private FileTrees() {}

    /** True if {@code dir} has no entries (an error if it is missing or not a directory). */
    public static boolean isEmpty(Path dir) throws IOException {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            return !entries.iterator().hasNext();
        }
    }

    /**
     * Removes a tree a kernel could write, without following any link in it, even one swapped in
     * while the removal runs: each directory is opened once and its entries removed relative to it.
     */
    public static void deleteTree(Path dir) throws IOException {
        BasicFileAttributes top;
        try {
            top = Files.readAttributes(dir, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return;
        }
        if (!top.isDirectory()) {
            Files.deleteIfExists(dir);
            return;
        }
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
            if (stream instanceof SecureDirectoryStream<Path> secure) {
                emptySecurely(secure);
            } else {
                for (Path entry : stream) {
                    deleteTree(entry);
                }
            }
        }
        Files.deleteIfExists(dir);
    }

    private static void emptySecurely(SecureDirectoryStream<Path> dir) throws IOException {
        for (Path entry : dir) {
            Path name = entry.getFileName();
            BasicFileAttributes a = dir.getFileAttributeView(
                            name, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                    .readAttributes();
            if (a.isDirectory()) {
                try (SecureDirectoryStream<Path> sub = dir.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS)) {
                    emptySecurely(sub);
                }
                dir.deleteDirectory(name);
            } else {
                dir.deleteFile(name);
            }
        }
    }
}

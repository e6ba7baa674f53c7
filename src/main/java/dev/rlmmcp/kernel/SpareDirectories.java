package dev.rlmmcp.kernel;

import dev.rlmmcp.base.FileTrees;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The writable directories warm kernels are started with, in {@code <root>/.warm/}, and how one
 * becomes a session's directory when its kernel is claimed: it is renamed to the session's path in
 * the same {@code root} (the kernel's bind mount follows the directory, not the path). A session
 * that has files there already (a snapshot to restore) has them moved in first, through
 * {@code <session>.claim}, a name no session id can have, so that a crash half way leaves every file
 * under the session's name: {@link #recover} puts them back. Entries are renamed, never followed
 * (a kernel wrote them).
 */
final class SpareDirectories {

    private static final String SPARES = ".warm";
    private static final String CLAIMING = ".claim";

    private SpareDirectories() {}

    /** Removes the spares an earlier server left and finishes the claims it left half done. */
    static void clean(Path root) throws IOException {
        FileTrees.deleteTree(root.resolve(SPARES));
        try (DirectoryStream<Path> claims = Files.newDirectoryStream(root, "*" + CLAIMING)) {
            for (Path claim : claims) {
                String name = claim.getFileName().toString();
                recover(root.resolve(name.substring(0, name.length() - CLAIMING.length())));
            }
        }
    }

    /** A new, empty spare directory. */
    static Path create(Path root) throws IOException {
        return Files.createTempDirectory(Files.createDirectories(root.resolve(SPARES)), "kernel-");
    }

    /**
     * Makes {@code spare} the directory {@code dir} (a sibling of {@code spare}'s parent), keeping
     * what {@code dir} holds; returns {@code dir}.
     */
    static Path adopt(Path spare, Path dir) throws IOException {
        recover(dir);
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS) || FileTrees.isEmpty(dir)) {
            // rename(2) replaces an empty directory: a new session's, the common case
            Files.move(spare, dir, StandardCopyOption.ATOMIC_MOVE);
            return dir;
        }
        Path claim = claimOf(dir);
        Files.move(spare, claim, StandardCopyOption.ATOMIC_MOVE);
        moveEntries(dir, claim);
        Files.move(claim, dir, StandardCopyOption.ATOMIC_MOVE);
        return dir;
    }

    /** Puts back what a claim of {@code dir} cut short left in its claim directory. */
    static void recover(Path dir) throws IOException {
        Path claim = claimOf(dir);
        if (!Files.isDirectory(claim, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            Files.move(claim, dir, StandardCopyOption.ATOMIC_MOVE);
            return;
        }
        moveEntries(claim, dir);
        FileTrees.deleteTree(claim);
    }

    /** Renames every entry of {@code from} into {@code to}, except those {@code to} has already. */
    private static void moveEntries(Path from, Path to) throws IOException {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(from)) {
            for (Path entry : entries) {
                Path target = to.resolve(entry.getFileName());
                if (!Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                    Files.move(entry, target, StandardCopyOption.ATOMIC_MOVE);
                }
            }
        }
    }

    private static Path claimOf(Path dir) {
        return dir.resolveSibling(dir.getFileName() + CLAIMING);
    }
}

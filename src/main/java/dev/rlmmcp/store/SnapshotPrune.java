package dev.rlmmcp.store;

import dev.rlmmcp.base.FileTrees;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.HashMap;
import java.util.Map;

/**
 * Cuts a snapshot directory that a kernel filled past its disk limit back to its snapshot: the
 * manifest and the files it names at the sizes it gives; everything else goes. If what is left is
 * still past the limit (the kernel wrote a manifest of its own), the directory is emptied: the
 * session starts over rather than the disk staying full. Call it only while no kernel can write the
 * directory (before one starts on it): nothing in it is followed, but nothing races the check either.
 */
public final class SnapshotPrune {

    private SnapshotPrune() {}

    /** Returns the bytes the directory holds after, by its files' sizes. */
    public static long prune(Path dir, long limit) throws IOException {
        Map<String, Long> keep = named(dir, limit);
        long kept = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                BasicFileAttributes a =
                        Files.readAttributes(entry, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                if (a.isRegularFile() && keep.containsKey(name) && keep.get(name) == a.size()) {
                    kept += a.size();
                } else {
                    FileTrees.deleteTree(entry);
                }
            }
        }
        if (kept > limit) {
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
                for (Path entry : entries) {
                    FileTrees.deleteTree(entry);
                }
            }
            return 0;
        }
        return kept;
    }

    /**
     * manifest.json and each file it names, with its size, read as the snapshot store reads a manifest;
     * nothing if the manifest is not a sane regular file.
     */
    private static Map<String, Long> named(Path dir, long limit) {
        Map<String, Long> files = new HashMap<>();
        Path manifest = dir.resolve(S3SnapshotStore.MANIFEST);
        try {
            BasicFileAttributes a =
                    Files.readAttributes(manifest, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!a.isRegularFile() || a.size() > S3SnapshotStore.MAX_MANIFEST_BYTES) {
                return files;
            }
            files.putAll(S3SnapshotStore.files(Files.readAllBytes(manifest), limit));
            files.put(S3SnapshotStore.MANIFEST, a.size());
        } catch (IOException | RuntimeException e) {
            files.clear();
        }
        return files;
    }
}

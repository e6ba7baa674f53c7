package dev.rlmmcp.kernel.process;

import dev.rlmmcp.base.FileTrees;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * The disk limit on sandboxed kernels' snapshot directories, shared by every kernel of one launcher:
 * how much a kernel may hold in the directory it is attached to, and the notes of directories whose
 * last kernel was killed over the limit. The notes are files (in the runtime directory), so that a
 * server started later still cuts such a directory back before another kernel runs there.
 */
final class SnapshotQuota {

    private final long diskBytes;
    /** Where the notes are kept (null: nowhere but in memory). */
    private final Path overLimit;
    /** The directories noted there, read once at start and kept in step with the notes. */
    private final Set<Path> noted;

    private final SnapshotCutBack snapshotCutBack;

    SnapshotQuota(long diskBytes, Path overLimit, SnapshotCutBack snapshotCutBack) {
        this.diskBytes = diskBytes;
        this.overLimit = overLimit;
        this.snapshotCutBack = snapshotCutBack;
        this.noted = notes(overLimit);
    }

    long diskBytes() {
        return diskBytes;
    }

    /**
     * What a kernel attached to {@code dir} may hold there. A directory whose last kernel was killed
     * over the limit is cut back to its snapshot (or emptied) first. One over the limit for another
     * reason (the limit was lowered) is left as it is, and its kernel may keep what it holds.
     */
    long allowance(Path dir) throws IOException {
        Path key = dir.toAbsolutePath().normalize();
        if (noted.remove(key)) {
            if (overLimit != null) {
                Files.deleteIfExists(note(key));
            }
            return Math.max(diskBytes, snapshotCutBack.cutBack(dir, diskBytes));
        }
        // a warm kernel's directory renamed for a new session: nothing in it yet
        return Math.max(diskBytes, FileTrees.isEmpty(dir) ? DirQuota.BLOCK : DirQuota.usage(dir, Long.MAX_VALUE));
    }

    /** Notes that a kernel was killed for writing more than the limit into {@code dir}. */
    void overrun(Path dir) {
        Path key = dir.toAbsolutePath().normalize();
        noted.add(key);
        if (overLimit == null) {
            return;
        }
        try {
            Files.createDirectories(overLimit);
            Files.writeString(note(key), key.toString());
        } catch (IOException e) {
            // then a kernel there after a restart may keep what this one left, within one overshoot
        }
    }

    /** The notes an earlier server left: each a file named by its directory's path's SHA-256, holding the path. */
    private static Set<Path> notes(Path overLimit) {
        Set<Path> noted = ConcurrentHashMap.newKeySet();
        if (overLimit != null && Files.isDirectory(overLimit)) {
            try (Stream<Path> files = Files.list(overLimit)) {
                for (Path file : (Iterable<Path>) files::iterator) {
                    noted.add(Path.of(Files.readString(file).trim()));
                }
            } catch (IOException | RuntimeException e) {
                // unreadable notes: those directories keep what their killed kernels left, within one overshoot
            }
        }
        return noted;
    }

    private Path note(Path key) {
        try {
            byte[] digest =
                    MessageDigest.getInstance("SHA-256").digest(key.toString().getBytes(StandardCharsets.UTF_8));
            return overLimit.resolve(HexFormat.of().formatHex(digest));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

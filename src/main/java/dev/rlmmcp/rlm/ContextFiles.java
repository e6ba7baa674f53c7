package dev.rlmmcp.rlm;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * The contexts a kernel hands to its children, taken out of its reach before the server reads them.
 * The kernel pickles each into {@code .transfer/<name>.pkl} in the directory it may write; the server
 * moves the entry, relative to a handle on {@code .transfer} opened without following links, into a
 * directory of its own on the same filesystem, and reads it only there and only as a regular file: a
 * link or FIFO the kernel planted, or a swap while this runs, ends in a refusal, never in a host file
 * read. Closing deletes what was taken.
 */
final class ContextFiles implements AutoCloseable {

    private static final Pattern NAME = Pattern.compile("\\.transfer/([A-Za-z0-9_-]{1,64}\\.pkl)");

    private final Path writable;
    private final Path taken;
    private final Map<String, Path> byName = new HashMap<>();

    /** For the files of the kernel that may write {@code writable} (null: none). */
    ContextFiles(Path writable) {
        this.writable = writable;
        this.taken = writable == null
                ? null
                : writable.resolveSibling(".rlm-contexts")
                        .resolve(UUID.randomUUID().toString());
    }

    /** The file the kernel named ({@code .transfer/<name>.pkl}), now the server's: a regular file. */
    synchronized Path take(String file) throws IOException {
        var m = file == null ? null : NAME.matcher(file);
        if (m == null || !m.matches()) {
            throw new IOException("the context file '" + file + "' is not .transfer/<name>.pkl");
        }
        if (writable == null) {
            throw new IOException("this kernel has no directory to hand a context over in");
        }
        String name = m.group(1);
        Path known = byName.get(name);
        if (known != null) {
            return known;
        }
        Files.createDirectories(taken);
        try (DirectoryStream<Path> top = Files.newDirectoryStream(writable);
                DirectoryStream<Path> mine = Files.newDirectoryStream(taken)) {
            if (!(top instanceof SecureDirectoryStream<Path> kernelDir)
                    || !(mine instanceof SecureDirectoryStream<Path> serverDir)) {
                throw new IOException("this filesystem cannot hand contexts over safely");
            }
            try (SecureDirectoryStream<Path> transfer =
                    kernelDir.newDirectoryStream(Path.of(".transfer"), LinkOption.NOFOLLOW_LINKS)) {
                transfer.move(Path.of(name), serverDir, Path.of(name));
            }
        }
        Path path = taken.resolve(name);
        BasicFileAttributes a = Files.getFileAttributeView(
                        path, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                .readAttributes();
        if (!a.isRegularFile()) {
            Files.deleteIfExists(path);
            throw new IOException("the context file " + name + " is not a regular file");
        }
        byName.put(name, path);
        return path;
    }

    @Override
    public synchronized void close() {
        for (Path p : byName.values()) {
            try {
                Files.deleteIfExists(p);
            } catch (IOException e) {
                // the directory goes below
            }
        }
        byName.clear();
        if (taken != null) {
            try {
                Files.deleteIfExists(taken);
            } catch (IOException e) {
                // left for the next start's cleanup
            }
        }
    }
}

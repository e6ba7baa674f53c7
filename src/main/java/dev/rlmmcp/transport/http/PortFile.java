package dev.rlmmcp.transport.http;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/** The file that tells other programs which port the server took: written 0600 at start, removed at shutdown. */
public final class PortFile implements AutoCloseable {

    private final Path path;

    private PortFile(Path path) {
        this.path = path;
    }

    /** Writes {@code port} to {@code path} atomically (a reader never sees a half-written file). */
    public static PortFile write(Path path, int port) {
        Path file = path.toAbsolutePath();
        try {
            Files.createDirectories(file.getParent());
            Path temp = Files.createTempFile(
                    file.getParent(),
                    ".port",
                    ".tmp",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(temp, port + "\n", StandardCharsets.US_ASCII);
            Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            return new PortFile(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the port file " + file + ": " + e.getMessage(), e);
        }
    }

    public Path path() {
        return path;
    }

    @Override
    public void close() {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove the port file " + path, e);
        }
    }
}

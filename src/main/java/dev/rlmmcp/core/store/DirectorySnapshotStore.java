package dev.rlmmcp.core.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Snapshots in a local directory: {@code root/<session id>/}, nothing to copy. */
public final class DirectorySnapshotStore implements SnapshotStore {

    private final Path root;

    public DirectorySnapshotStore(Path root) {
        this.root = root;
    }

    @Override
    public Path checkout(String sessionId) throws IOException {
        return Files.createDirectories(directory(sessionId));
    }

    @Override
    public void committed(String sessionId) {
    }

    @Override
    public void delete(String sessionId) throws IOException {
        Path dir = directory(sessionId);
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> tree = Files.walk(dir)) {
            tree.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    private Path directory(String sessionId) {
        if (!sessionId.matches("[A-Za-z0-9_-]+")) {
            throw new IllegalArgumentException("not a session id: " + sessionId);
        }
        return root.resolve(sessionId);
    }
}

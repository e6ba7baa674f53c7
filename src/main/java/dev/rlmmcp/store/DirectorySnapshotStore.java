package dev.rlmmcp.store;

import dev.rlmmcp.base.FileTrees;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Snapshots in a local directory: {@code root/<session id>/}, nothing to copy. */
final class DirectorySnapshotStore implements SnapshotStore {

    private final Path root;

    DirectorySnapshotStore(Path root) {
        this.root = root;
    }

    @Override
    public Path root() {
        return root;
    }

    @Override
    public Path checkout(String sessionId) throws IOException {
        return Files.createDirectories(directory(sessionId));
    }

    @Override
    public void committed(String sessionId) {}

    /** Removes the directory without following anything the kernel may have left in it. */
    @Override
    public void delete(String sessionId) throws IOException {
        FileTrees.deleteTree(directory(sessionId));
    }

    private Path directory(String sessionId) {
        if (!sessionId.matches("[A-Za-z0-9_-]+")) {
            throw new IllegalArgumentException("not a session id: " + sessionId);
        }
        return root.resolve(sessionId);
    }
}

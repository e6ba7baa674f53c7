package dev.rlmmcp.cli;

import dev.rlmmcp.store.StateDirectoryLock;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a server keeps its sessions. {@code --state-dir} names the directory exactly; without it, each
 * project (the canonical data root) has its own under the state root:
 * {@code <root>/projects/<name of the data root>-<hash of its canonical path>}. One server at a time
 * per directory (a lock in it): a second server on an explicit {@code --state-dir} refuses to start; on
 * the default directory of a project already served, it takes the project's next directory
 * ({@code …-2}, {@code …-3}), so two agents on one project both work, each with its own sessions.
 */
final class StateDirectories {

    private static final Logger log = LoggerFactory.getLogger(StateDirectories.class);
    static final String PROJECTS = "projects";
    static final int SLOTS = 9;

    private StateDirectories() {}

    /** A directory chosen and locked for this server. */
    record Chosen(Path directory, StateDirectoryLock lock) {}

    /** The state root: {@code $XDG_DATA_HOME/rlm-mcp}, else {@code $HOME/.local/share/rlm-mcp}. */
    static Path root(Map<String, String> env) {
        return UserHome.dataHome(env).resolve("rlm-mcp");
    }

    /** The project's default state directory: named after the data root, keyed by its canonical path. */
    static Path forProject(Path root, Path dataRoot) {
        Path canonical = canonical(dataRoot);
        Path last = canonical.getFileName();
        String name = last == null ? "root" : last.toString().replaceAll("[^A-Za-z0-9._-]", "_");
        if (name.length() > 40) {
            name = name.substring(0, 40);
        }
        if (name.isEmpty() || name.startsWith(".")) {
            name = "_" + name;
        }
        return root.resolve(PROJECTS).resolve(name + "-" + hash(canonical.toString()));
    }

    static Path canonical(Path dir) {
        try {
            return dir.toRealPath();
        } catch (IOException e) {
            return dir.toAbsolutePath().normalize();
        }
    }

    private static String hash(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 5);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Exactly {@code dir}, locked; refused if another server holds it. */
    static Chosen explicit(Path dir) {
        Path directory = dir.toAbsolutePath().normalize();
        Optional<StateDirectoryLock> lock = lock(directory);
        if (lock.isEmpty()) {
            throw new StartRefused("the state directory " + directory + " is in use by another rlm-mcp server (pid "
                    + StateDirectoryLock.holder(directory) + "); stop that server, or give this one its own "
                    + "--state-dir (or --ephemeral)");
        }
        return new Chosen(directory, lock.get());
    }

    /** The project's default directory, or its next free one while other servers hold those. */
    static Chosen byDefault(Path root, Path dataRoot) {
        Path first = forProject(root, dataRoot);
        noteSharedSessions(root);
        for (int slot = 1; slot <= SLOTS; slot++) {
            Path directory = slot == 1 ? first : first.resolveSibling(first.getFileName() + "-" + slot);
            Optional<StateDirectoryLock> lock = lock(directory);
            if (lock.isPresent()) {
                if (slot > 1) {
                    log.info(
                            "the state directory {} is in use by another rlm-mcp server (pid {}); this one keeps "
                                    + "its sessions in {}",
                            first,
                            StateDirectoryLock.holder(first),
                            directory);
                }
                return new Chosen(directory, lock.get());
            }
        }
        throw new StartRefused(SLOTS + " rlm-mcp servers already serve the data root " + canonical(dataRoot)
                + " (state directories " + first + " to -" + SLOTS + "); stop one, or pass --state-dir");
    }

    /** Sessions kept, before state directories were per project, in the state root itself stay there: say where. */
    private static void noteSharedSessions(Path root) {
        if (Files.isRegularFile(root.resolve("sessions.db"))) {
            log.info(
                    "sessions of earlier rlm-mcp versions (every project's) stay in {}; they are not moved: "
                            + "start with --state-dir {} to reach them",
                    root,
                    root);
        }
    }

    private static Optional<StateDirectoryLock> lock(Path directory) {
        try {
            if (!Files.isDirectory(directory)) {
                Files.createDirectories(
                        directory, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            }
            if (!Files.isWritable(directory)) {
                throw new StartRefused("the state directory " + directory + " is not writable (choose another with "
                        + "--state-dir, or run with --ephemeral)");
            }
            return StateDirectoryLock.tryAcquire(directory);
        } catch (IOException e) {
            String why = e instanceof java.nio.file.FileSystemException fs && fs.getReason() != null
                    ? fs.getReason()
                    : e instanceof java.nio.file.FileAlreadyExistsException
                            ? "a file of that name is in the way"
                            : e.getMessage();
            throw new StartRefused("cannot use the state directory " + directory + ": " + why
                    + " (choose another with --state-dir, or run with --ephemeral)");
        }
    }

    /** A start that cannot go on, said in one line (no usage text, no stack trace). */
    static final class StartRefused extends RuntimeException {
        StartRefused(String message) {
            super(message, null, false, false);
        }
    }
}

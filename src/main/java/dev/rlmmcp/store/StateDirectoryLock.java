package dev.rlmmcp.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One server per state directory: an exclusive lock on {@code server.lock} in it, held until the
 * process ends (the operating system releases it then, even after SIGKILL), with the holder's pid
 * written in the file so that a second server can say who has it. Two servers on one directory
 * would each hold their own view of the same sessions and write the same records and snapshots.
 */
public final class StateDirectoryLock {

    static final String FILE = "server.lock";
    /** Held for the life of the process: a lock whose channel is collected would be released. */
    private static final List<StateDirectoryLock> HELD = new CopyOnWriteArrayList<>();

    private final Path directory;
    private final FileChannel channel;
    private final FileLock lock;

    private StateDirectoryLock(Path directory, FileChannel channel, FileLock lock) {
        this.directory = directory;
        this.channel = channel;
        this.lock = lock;
    }

    /** Takes the directory's lock, or returns empty if another server (or this one) holds it. */
    public static Optional<StateDirectoryLock> tryAcquire(Path directory) throws IOException {
        Path file = directory.resolve(FILE);
        FileChannel channel =
                FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = channel.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
        if (lock == null) {
            channel.close();
            return Optional.empty();
        }
        channel.truncate(0);
        channel.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.UTF_8)), 0);
        channel.force(false);
        StateDirectoryLock held = new StateDirectoryLock(directory, channel, lock);
        HELD.add(held);
        return Optional.of(held);
    }

    /** The pid written by the server holding the directory's lock, or "unknown". */
    public static String holder(Path directory) {
        try {
            String pid = Files.readString(directory.resolve(FILE), StandardCharsets.UTF_8)
                    .strip();
            return pid.matches("\\d{1,10}") ? pid : "unknown";
        } catch (IOException e) {
            return "unknown";
        }
    }

    public Path directory() {
        return directory;
    }

    /** Lets the directory go (tests; a server keeps it until it exits). */
    public void release() throws IOException {
        HELD.remove(this);
        try {
            lock.release();
        } finally {
            channel.close();
        }
    }
}

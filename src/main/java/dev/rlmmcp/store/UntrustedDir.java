package dev.rlmmcp.store;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A directory that a kernel can write (its snapshot directory), read by the server as hostile: the
 * names it holds are checked as plain file names, nothing in it is followed, and a file is read only
 * as a regular file of the size its manifest declares. A file is first hard-linked into a staging
 * directory the kernel cannot see: a link names the inode, whose type (regular, symlink, FIFO) no
 * longer changes, so what was checked is what is read; the kernel can neither swap the name for a
 * link to a host file nor make the server block on a FIFO. Files coming in are written to staging and
 * renamed into place, so a name the kernel planted is replaced, never written through.
 */
final class UntrustedDir {

    private static final AtomicLong STAGED = new AtomicLong();

    private final Path dir;
    private final Path staging;

    /** {@code staging} must be on the same filesystem as {@code dir} and outside every sandbox. */
    UntrustedDir(Path dir, Path staging) {
        this.dir = dir;
        this.staging = staging;
    }

    /**
     * {@code name} if it is a plain file name: no separator, no NUL, not {@code .} or {@code ..}, not
     * hidden (the kernel's temporary files start with a dot), at most 255 bytes.
     */
    static String fileName(String name) throws IOException {
        if (name == null
                || name.isEmpty()
                || name.startsWith(".")
                || name.indexOf('/') >= 0
                || name.indexOf('\\') >= 0
                || name.indexOf('\0') >= 0
                || name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 255) {
            throw new IOException("the manifest names '" + printable(name) + "', which is not a plain file name");
        }
        return name;
    }

    /** A file's bytes, at most {@code max} of them (a manifest, a record): a regular file, never a link. */
    byte[] read(String name, long max) throws IOException {
        try (Staged file = stage(name)) {
            if (file.size() > max) {
                throw new IOException(name + " has " + file.size() + " bytes, more than the " + max + " allowed");
            }
            try (InputStream in = Files.newInputStream(file.path(), LinkOption.NOFOLLOW_LINKS)) {
                return in.readNBytes((int) max);
            }
        }
    }

    /**
     * The file, staged, for reading: a regular file of exactly {@code size} bytes. Close it when done
     * (which removes the staging link).
     */
    Staged open(String name, long size) throws IOException {
        Staged file = stage(name);
        if (file.size() != size) {
            file.close();
            throw new IOException(name + " has " + file.size() + " bytes, its manifest says " + size);
        }
        return file;
    }

    /** True if {@code name} is a regular file (not a link) of {@code size} bytes. */
    boolean holds(String name, long size) {
        try {
            BasicFileAttributes a = Files.readAttributes(
                    dir.resolve(fileName(name)), BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            return a.isRegularFile() && a.size() == size;
        } catch (IOException e) {
            return false;
        }
    }

    /** Writes {@code name} from {@code in}: into staging first, then renamed over whatever the name was. */
    long put(String name, InputStream in) throws IOException {
        fileName(name);
        Path tmp = stagingPath(name);
        try {
            long n = Files.copy(in, tmp);
            Files.move(tmp, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return n;
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /** A staged hard link to a checked regular file; closing it removes the link. */
    record Staged(Path path, long size) implements AutoCloseable {

        @Override
        public void close() throws IOException {
            Files.deleteIfExists(path);
        }
    }

    private Staged stage(String name) throws IOException {
        fileName(name);
        Path link = stagingPath(name);
        try {
            Files.createLink(link, dir.resolve(name));
        } catch (NoSuchFileException e) {
            throw new NoSuchFileException(name);
        } catch (FileAlreadyExistsException e) {
            throw new IOException("staging name " + link + " in use", e);
        } catch (IOException e) {
            throw new IOException(
                    name + " cannot be read as a regular file (" + e.getClass().getSimpleName() + ")", e);
        }
        try {
            BasicFileAttributes a = Files.readAttributes(link, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!a.isRegularFile()) {
                throw new IOException(name + " is not a regular file");
            }
            return new Staged(link, a.size());
        } catch (IOException e) {
            Files.deleteIfExists(link);
            throw e;
        }
    }

    private Path stagingPath(String name) throws IOException {
        Files.createDirectories(staging);
        return staging.resolve(
                STAGED.incrementAndGet() + "-" + ProcessHandle.current().pid() + "-" + name);
    }

    private static String printable(String name) {
        return name == null ? "null" : name.replaceAll("[\\p{Cntrl}]", "?");
    }
}

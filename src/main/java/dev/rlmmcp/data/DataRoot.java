package dev.rlmmcp.data;

import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/** The directory that file loads are confined to: paths are resolved, symlinks followed, and checked. */
public final class DataRoot {

    private final Path root;

    public DataRoot(Path root) {
        try {
            this.root = root.toRealPath();
        } catch (IOException e) {
            throw new UncheckedIOException("data root " + root + " is not an existing directory", e);
        }
        if (!Files.isDirectory(this.root)) {
            throw new IllegalArgumentException("data root " + root + " is not a directory");
        }
    }

    public Path path() {
        return root;
    }

    /** A readable regular file under the root, given relative to it or absolute inside it. */
    public Path resolve(String argument, String userPath) {
        if (userPath == null || userPath.isBlank()) {
            throw RlmException.invalid(
                    argument, argument + " is empty", "give a file path relative to the data root " + root);
        }
        Path lexical;
        try {
            lexical = root.resolve(userPath).normalize();
        } catch (InvalidPathException e) {
            throw RlmException.invalid(
                    argument,
                    argument + " is not a valid path: " + e.getReason(),
                    "give a file path relative to the data root " + root);
        }
        if (!lexical.startsWith(root)) {
            throw outside(argument, userPath);
        }
        Path real;
        try {
            real = lexical.toRealPath();
        } catch (NoSuchFileException e) {
            throw new RlmException(
                    ErrorCode.FILE_NOT_FOUND,
                    "no file " + userPath + " under the data root " + root,
                    argument,
                    "check the name; paths are relative to the data root");
        } catch (IOException e) {
            throw new RlmException(
                    ErrorCode.PERMISSION_DENIED,
                    "cannot open " + userPath + ": " + e.getMessage(),
                    argument,
                    "check the file's permissions");
        }
        if (!real.startsWith(root)) {
            throw outside(argument, userPath);
        }
        if (!Files.isRegularFile(real)) {
            throw RlmException.invalid(
                    argument, userPath + " is not a regular file", "give the path of a file, not a directory");
        }
        if (!Files.isReadable(real)) {
            throw new RlmException(
                    ErrorCode.PERMISSION_DENIED,
                    userPath + " is not readable",
                    argument,
                    "check the file's permissions");
        }
        return real;
    }

    private RlmException outside(String argument, String userPath) {
        return new RlmException(
                ErrorCode.PATH_OUTSIDE_DATA_ROOT,
                userPath + " is outside the data root " + root + " (after resolving '..' and symlinks)",
                argument,
                "load files from inside the data root, or start the server with --data-root pointing at the data");
    }
}

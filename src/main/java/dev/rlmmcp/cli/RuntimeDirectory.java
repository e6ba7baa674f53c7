package dev.rlmmcp.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/** The server's private runtime directory (the kernel harness, seccomp filters, spools). */
final class RuntimeDirectory {

    private RuntimeDirectory() {}

    /**
     * {@code given} (--runtime-dir), else $XDG_RUNTIME_DIR/rlm-mcp, else one per user in the temp dir;
     * created readable by the owner only if missing.
     */
    static Path createPrivate(CommandSpec spec, Path given) {
        Path dir = given;
        if (dir == null) {
            String xdg = System.getenv("XDG_RUNTIME_DIR");
            dir = xdg != null && Files.isDirectory(Path.of(xdg))
                    ? Path.of(xdg, "rlm-mcp")
                    : Path.of(System.getProperty("java.io.tmpdir"), "rlm-mcp-" + System.getProperty("user.name"));
        }
        try {
            if (!Files.isDirectory(dir)) {
                Files.createDirectories(
                        dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            }
        } catch (IOException e) {
            throw new ParameterException(
                    spec.commandLine(),
                    "cannot create the runtime directory " + dir + ": " + e + " (choose another with --runtime-dir)");
        }
        return dir;
    }
}

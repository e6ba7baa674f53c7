package dev.rlmmcp.kernel.process;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Finds the real interpreter behind a name such as {@code python3}: kernels start faster without
 * wrapper scripts (pyenv shims, for one) in between, and a too-old Python is refused with a clear message.
 * A venv keeps its own {@code bin/python} (sys.executable), so that its packages stay importable.
 */
public final class PythonLocator {

    /**
     * Run as {@code python -I} like the kernel, so sys.path is the kernel's. One field a line: executable,
     * sys.version, x.y.z, then the installation's prefixes and the existing sys.path directories, NUL-separated.
     */
    static final String PROBE = String.join(
            "\n",
            "import os, sys",
            "print(sys.executable)",
            "print(sys.version.replace(chr(10), ' '))",
            "print('%d.%d.%d' % sys.version_info[:3])",
            "print(chr(0).join(sorted({sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix})))",
            "print(chr(0).join(p for p in sys.path if p and os.path.isdir(p)))",
            "");

    private PythonLocator() {}

    /**
     * {@code build}: the full sys.version, which tells two builds of one release apart; {@code prefixes}:
     * sys.prefix and friends; {@code searchPath}: the directories on sys.path (site-packages, .pth additions).
     */
    public record Python(Path executable, String version, String build, List<Path> prefixes, List<Path> searchPath) {

        /** True if the other probe saw the same interpreter: same executable, build and installation. */
        public boolean sameAs(Python other) {
            return executable.equals(other.executable) && build.equals(other.build) && prefixes.equals(other.prefixes);
        }

        /**
         * Every directory a sandbox must show for this interpreter to run with its packages: the prefixes
         * (a venv's and its base's), sys.path, and the directory of each link on the way from the
         * executable to the real binary (a venv's bin/python links to its base interpreter).
         */
        public List<Path> readableDirs() {
            Set<Path> dirs = new LinkedHashSet<>(prefixes);
            dirs.addAll(searchPath);
            dirs.addAll(linkDirs(executable));
            return List.copyOf(dirs);
        }

        @Override
        public String toString() {
            return executable + " (Python " + version + ")";
        }
    }

    public static Python locate(String command) {
        Process process;
        try {
            process = new ProcessBuilder(List.of(command, "-I", "-c", PROBE))
                    .redirectErrorStream(true)
                    .start();
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot run Python '" + command + "': " + e.getMessage()
                            + ". Install python3 (3.10 or newer) or point --python / RLM_PYTHON at one.",
                    e);
        }
        try {
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(10, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException("Python '" + command + "' failed to start: " + out.strip());
            }
            Python python = parse(out, command);
            String[] parts = python.version().split("\\.");
            if (Integer.parseInt(parts[0]) < 3
                    || (Integer.parseInt(parts[0]) == 3 && Integer.parseInt(parts[1]) < 10)) {
                throw new IllegalStateException("Python '" + command + "' is " + python.version()
                        + "; rlm-mcp needs 3.10 or newer (set --python / RLM_PYTHON)");
            }
            return python;
        } catch (IOException | NumberFormatException e) {
            throw new IllegalStateException("cannot tell which Python '" + command + "' is: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while probing Python", e);
        } finally {
            process.destroy();
        }
    }

    /** The probe's answer (its last five lines: anything before them is noise from start-up files). */
    public static Python parse(String out, String command) {
        String[] lines = out.stripTrailing().split("\n", -1);
        if (lines.length < 5) {
            throw new IllegalStateException("cannot tell which Python '" + command + "' is: " + out.strip());
        }
        int at = lines.length - 5;
        String executable = lines[at].strip();
        return new Python(
                executable.isEmpty() ? Path.of(command) : Path.of(executable),
                lines[at + 2].strip(),
                lines[at + 1].strip(),
                paths(lines[at + 3]),
                paths(lines[at + 4]));
    }

    /** The probe as a script file under {@code dir}, for running it where a kernel runs. */
    public static Path installProbe(Path dir) {
        try {
            Files.createDirectories(dir);
            Path target = dir.resolve("python-probe.py");
            if (!Files.exists(target) || !Files.readString(target).equals(PROBE)) {
                Path temp = Files.createTempFile(dir, "probe", ".tmp");
                Files.writeString(temp, PROBE);
                temp.toFile().setReadable(true, false);
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            }
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the Python probe in " + dir, e);
        }
    }

    private static List<Path> paths(String line) {
        return Arrays.stream(line.strip().split("\0"))
                .filter(p -> !p.isEmpty())
                .map(Path::of)
                .toList();
    }

    /** The directories holding each symlink from {@code executable} to the real file, and the file's own. */
    static List<Path> linkDirs(Path executable) {
        List<Path> dirs = new ArrayList<>();
        Path current = executable.toAbsolutePath().normalize();
        for (int hops = 0; hops < 40; hops++) {
            try {
                Path parent = current.getParent();
                if (parent == null) {
                    break;
                }
                Path realParent = parent.toRealPath();
                if (!realParent.equals(parent)) {
                    dirs.add(parent);
                }
                dirs.add(realParent);
                current = realParent.resolve(current.getFileName());
                if (!Files.isSymbolicLink(current)) {
                    break;
                }
                current = realParent.resolve(Files.readSymbolicLink(current)).normalize();
            } catch (IOException e) {
                break;
            }
        }
        return dirs;
    }
}

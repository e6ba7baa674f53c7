package dev.rlmmcp.core.kernel;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Finds the real interpreter behind a name such as {@code python3}: kernels start faster without
 * wrapper scripts (pyenv shims, for one) in between, and a too-old Python is refused with a clear message.
 */
public final class PythonLocator {

    private static final String PROBE = "import sys; print(sys.executable);"
            + " print(chr(0).join(sorted({sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix})));"
            + " print('%d.%d' % sys.version_info[:2])";

    private PythonLocator() {
    }

    /** {@code prefixes}: the installation's directories (sys.prefix and friends), which a sandbox must show. */
    public record Python(Path executable, String version, List<Path> prefixes) {
    }

    public static Python locate(String command) {
        Process process;
        try {
            process = new ProcessBuilder(List.of(command, "-c", PROBE)).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot run Python '" + command + "': " + e.getMessage()
                    + ". Install python3 (3.10 or newer) or point --python / RLM_PYTHON at one.", e);
        }
        try {
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (!process.waitFor(10, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException("Python '" + command + "' failed to start: " + out);
            }
            String[] lines = out.split("\n");
            String version = lines[lines.length - 1].strip();
            String[] parts = version.split("\\.");
            if (Integer.parseInt(parts[0]) < 3 || (Integer.parseInt(parts[0]) == 3 && Integer.parseInt(parts[1]) < 10)) {
                throw new IllegalStateException("Python '" + command + "' is " + version
                        + "; rlm-mcp needs 3.10 or newer (set --python / RLM_PYTHON)");
            }
            String executable = lines[lines.length - 3].strip();
            List<Path> prefixes = java.util.Arrays.stream(lines[lines.length - 2].strip().split("\0"))
                    .filter(p -> !p.isEmpty()).map(Path::of).toList();
            return new Python(executable.isEmpty() ? Path.of(command) : Path.of(executable), version, prefixes);
        } catch (IOException | NumberFormatException | ArrayIndexOutOfBoundsException e) {
            throw new IllegalStateException("cannot tell which Python '" + command + "' is: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while probing Python", e);
        } finally {
            process.destroy();
        }
    }
}

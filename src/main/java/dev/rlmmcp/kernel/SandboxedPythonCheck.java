package dev.rlmmcp.kernel;

import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.kernel.process.KernelHandle;
import dev.rlmmcp.kernel.process.KernelLauncher;
import dev.rlmmcp.kernel.process.KernelSpec;
import dev.rlmmcp.kernel.process.PythonLocator;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs the configured interpreter once where kernels run, on the install probe, and checks that the
 * sandbox ran that very Python: a sandbox that cannot show a Python's own libpython may load another
 * one of the same version, silently.
 */
final class SandboxedPythonCheck {

    private SandboxedPythonCheck() {}

    /**
     * {@code configured} if {@code launcher}, given {@code spec} (the probe as harness), runs it within
     * {@code timeout} with the same build and installation; else KERNEL_UNAVAILABLE saying why.
     */
    static PythonLocator.Python verify(
            KernelLauncher launcher, KernelSpec spec, PythonLocator.Python configured, Duration timeout) {
        String why;
        try {
            KernelHandle kernel = launcher.start(spec);
            Process process = kernel.process();
            process.getOutputStream().close();
            CompletableFuture<byte[]> out =
                    CompletableFuture.supplyAsync(() -> readAll(process.getInputStream()), Thread::startVirtualThread);
            CompletableFuture<byte[]> err =
                    CompletableFuture.supplyAsync(() -> readAll(process.getErrorStream()), Thread::startVirtualThread);
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                kernel.kill();
                why = "it did not answer within " + timeout.toSeconds() + " s";
            } else if (process.exitValue() != 0) {
                why = "it failed: " + lastLine(new String(err.join(), StandardCharsets.UTF_8));
            } else {
                PythonLocator.Python seen = PythonLocator.parse(
                        new String(out.join(), StandardCharsets.UTF_8),
                        configured.executable().toString());
                if (seen.sameAs(configured)) {
                    return configured;
                }
                why = "it ran Python " + seen.version() + " with prefix "
                        + String.join(
                                ", ",
                                seen.prefixes().stream().map(Path::toString).toList()) + " instead";
            }
        } catch (IOException | IllegalStateException e) {
            why = "it cannot start: " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            why = "interrupted";
        }
        throw new RlmException(
                ErrorCode.KERNEL_UNAVAILABLE,
                "the " + launcher.name() + " sandbox cannot run the " + "configured Python " + configured + ": " + why,
                null,
                "make its files readable by others (kernels run as uid 65534), point --python / RLM_PYTHON at another "
                        + "interpreter, or use another --sandbox");
    }

    private static byte[] readAll(InputStream in) {
        try (in) {
            return in.readAllBytes();
        } catch (IOException e) {
            return new byte[0];
        }
    }

    private static String lastLine(String text) {
        String[] lines = text.strip().split("\n");
        return lines.length == 0 || lines[lines.length - 1].isBlank()
                ? "(no message)"
                : lines[lines.length - 1].strip();
    }
}

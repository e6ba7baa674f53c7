package dev.rlmmcp.e2e.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs short system commands (ip, nginx -t) and says what failed. */
final class Shell {

    private Shell() {}

    /** Runs the command; its exit status and output when it fails. */
    static Result run(String... command) {
        try {
            Process process =
                    new ProcessBuilder(command).redirectErrorStream(true).start();
            byte[] out = process.getInputStream().readAllBytes();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return new Result(-1, String.join(" ", command) + ": still running after 30 s");
            }
            return new Result(process.exitValue(), new String(out, StandardCharsets.UTF_8));
        } catch (IOException e) {
            return new Result(-1, String.join(" ", command) + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(-1, "interrupted");
        }
    }

    /** Runs the command and throws with its output unless it succeeds. */
    static String must(String... command) {
        Result result = run(command);
        if (result.status() != 0) {
            throw new IllegalStateException(String.join(" ", List.of(command)) + " failed (" + result.status() + "): "
                    + result.output().strip());
        }
        return result.output();
    }

    record Result(int status, String output) {}
}

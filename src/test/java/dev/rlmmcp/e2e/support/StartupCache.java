package dev.rlmmcp.e2e.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;

/**
 * The launcher's JVM start-up cache for the jar as built, which {@code bin/rlm-mcp build} leaves beside it: a
 * test of a user's very first start needs it, and a test run's build makes the jar anew. Made as the launcher
 * makes it when it finds none (a start begins it in the background), and waited for.
 */
public final class StartupCache {

    private StartupCache() {}

    /** Returns once a cache newer than the jar is there; fails after {@code max}. */
    public static void await(Duration max) throws IOException, InterruptedException {
        Path target = McpDriver.projectRoot().resolve("target");
        if (fresh(target)) {
            return;
        }
        Process start = new ProcessBuilder(
                        McpDriver.projectRoot().resolve("bin/rlm-mcp").toString(), "stdio")
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        start.waitFor();
        long deadline = System.nanoTime() + max.toNanos();
        while (!fresh(target) && System.nanoTime() < deadline) {
            Thread.sleep(250);
        }
        assertThat(fresh(target))
                .as("a start-up cache newer than target/rlm-mcp.jar")
                .isTrue();
    }

    private static boolean fresh(Path target) throws IOException {
        long jar = Files.getLastModifiedTime(target.resolve("rlm-mcp.jar")).toMillis();
        try (Stream<Path> files = Files.list(target)) {
            return files.filter(f -> f.getFileName().toString().matches("rlm-mcp-.*\\.(aot|jsa)"))
                    .anyMatch(f -> {
                        try {
                            return Files.getLastModifiedTime(f).toMillis() > jar;
                        } catch (IOException e) {
                            return false;
                        }
                    });
        }
    }
}

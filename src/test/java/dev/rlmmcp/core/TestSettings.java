package dev.rlmmcp.core;

import dev.rlmmcp.kernel.ImportPolicy;
import dev.rlmmcp.kernel.Settings;
import java.nio.file.Path;
import java.time.Duration;

/** Settings for tests: the real python3, small limits, short grace. */
public final class TestSettings {

    private TestSettings() {}

    public static Settings in(Path dir) {
        return in(dir, 1024L * 1024 * 1024);
    }

    public static Settings in(Path dir, long memoryLimitBytes) {
        return new Settings(
                System.getenv().getOrDefault("RLM_PYTHON", "python3"),
                dir,
                dir.resolve("runtime"),
                memoryLimitBytes,
                0.8,
                0.6,
                2000,
                Duration.ofSeconds(30),
                Duration.ofSeconds(120),
                Duration.ofMillis(700),
                Duration.ofSeconds(30),
                Duration.ofHours(1),
                ImportPolicy.OFF);
    }
}

package dev.rlmmcp.core;

import java.nio.file.Path;
import java.time.Duration;

/** Everything the core needs to know from the command line and environment. */
public record Settings(
        String python,
        Path dataRoot,
        Path runtimeDir,
        long memoryLimitBytes,
        double cleanupThreshold,
        double cleanupTarget,
        int outputCap,
        Duration defaultTimeout,
        Duration maxTimeout,
        Duration interruptGrace,
        Duration kernelStartTimeout,
        Duration idleTimeout,
        Limits defaultLimits,
        ImportPolicy importPolicy,
        Capacity capacity) {

    /** With the capacity derived from the machine. */
    public Settings(String python, Path dataRoot, Path runtimeDir, long memoryLimitBytes, double cleanupThreshold,
            double cleanupTarget, int outputCap, Duration defaultTimeout, Duration maxTimeout, Duration interruptGrace,
            Duration kernelStartTimeout, Duration idleTimeout, Limits defaultLimits, ImportPolicy importPolicy) {
        this(python, dataRoot, runtimeDir, memoryLimitBytes, cleanupThreshold, cleanupTarget, outputCap, defaultTimeout,
                maxTimeout, interruptGrace, kernelStartTimeout, idleTimeout, defaultLimits, importPolicy, Capacity.AUTO);
    }
}

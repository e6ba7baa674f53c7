package dev.rlmmcp.core;

import java.time.Duration;

/**
 * What the layers above core may know of the kernels' settings: the step timeouts (default, longest,
 * and the grace an interrupt gets), the output cap, and the memory limit with the memory policy's
 * thresholds (fractions of it) that their replies explain.
 */
public record KernelSettings(
        Duration defaultTimeout,
        Duration maxTimeout,
        Duration interruptGrace,
        int outputCap,
        long memoryLimitBytes,
        double cleanupThreshold,
        double cleanupTarget) {}

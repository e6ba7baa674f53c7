package dev.rlmmcp.kernel;

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
        ImportPolicy importPolicy,
        Capacity capacity,
        long diskLimitBytes,
        boolean syncSnapshots) {

    /** The default of {@code --max-disk-mb} with the default 1 GiB of variables: a snapshot of them twice over. */
    public static final long DEFAULT_DISK_BYTES = 2048L * 1024 * 1024;

    /** Snapshots written, not fsynced: a process that dies loses nothing it had written. */
    public Settings(
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
            ImportPolicy importPolicy,
            Capacity capacity,
            long diskLimitBytes) {
        this(
                python,
                dataRoot,
                runtimeDir,
                memoryLimitBytes,
                cleanupThreshold,
                cleanupTarget,
                outputCap,
                defaultTimeout,
                maxTimeout,
                interruptGrace,
                kernelStartTimeout,
                idleTimeout,
                importPolicy,
                capacity,
                diskLimitBytes,
                false);
    }

    /** With the capacity derived from the machine and the default disk limit. */
    public Settings(
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
            ImportPolicy importPolicy) {
        this(
                python,
                dataRoot,
                runtimeDir,
                memoryLimitBytes,
                cleanupThreshold,
                cleanupTarget,
                outputCap,
                defaultTimeout,
                maxTimeout,
                interruptGrace,
                kernelStartTimeout,
                idleTimeout,
                importPolicy,
                Capacity.AUTO,
                DEFAULT_DISK_BYTES);
    }
}

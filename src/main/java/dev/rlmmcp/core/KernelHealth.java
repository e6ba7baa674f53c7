package dev.rlmmcp.core;

/**
 * The kernels as the health endpoint shows them: the sandbox and cgroup in use, the kernels running,
 * warm and waiting against the server's capacity, the interpreter (null until known) and each
 * session's memory limit.
 */
public record KernelHealth(
        String sandbox,
        String cgroup,
        boolean cgroupLimits,
        int kernelsRunning,
        int warmKernels,
        int warmTarget,
        int kernelsWaiting,
        int maxKernels,
        long memoryUsedBytes,
        long maxMemoryBytes,
        String python,
        String pythonVersion,
        long sessionLimitBytes) {}

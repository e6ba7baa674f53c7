package dev.rlmmcp.kernel;

/**
 * What the server may run at once, from --max-kernels and --max-total-memory-mb (0: derived from the
 * machine, see {@link KernelBudget}), how many kernels it keeps started ahead of need
 * ({@code --warm-kernels}, see {@link WarmKernels}), and the uids kernels run as where neither a pids cgroup nor a
 * user namespace of their own keeps their processes apart ({@code --kernel-uids}).
 */
public record Capacity(int maxKernels, long maxTotalMemoryBytes, int warmKernels, int firstKernelUid, int kernelUids) {

    /** Above the ranges systemd and useradd hand out (0x70000000 on), one uid per kernel. */
    public static final int DEFAULT_FIRST_KERNEL_UID = 0x70000000;

    public static final int DEFAULT_KERNEL_UIDS = 65536;
    public static final int DEFAULT_WARM_KERNELS = 2;

    /** Everything derived from the machine, with the default warm kernels and uid range. */
    public static final Capacity AUTO =
            new Capacity(0, 0, DEFAULT_WARM_KERNELS, DEFAULT_FIRST_KERNEL_UID, DEFAULT_KERNEL_UIDS);

    public Capacity {
        if (maxKernels < 0
                || maxTotalMemoryBytes < 0
                || warmKernels < 0
                || firstKernelUid <= 0
                || kernelUids < 1
                || (long) firstKernelUid + kernelUids - 1 > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("invalid capacity " + maxKernels + ", " + maxTotalMemoryBytes + ", "
                    + warmKernels + ", " + firstKernelUid + "+" + kernelUids);
        }
    }
}

package dev.rlmmcp.kernel;

import dev.rlmmcp.kernel.process.BwrapLauncher;
import dev.rlmmcp.kernel.process.CgroupLimits;
import dev.rlmmcp.kernel.process.ContainerLauncher;
import dev.rlmmcp.kernel.process.KernelLauncher;
import dev.rlmmcp.kernel.process.KernelUids;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * How this host runs kernels, decided once at start ({@link #decide}) from the settings and what the
 * machine offers, and logged in one line: the launcher (the sandbox), a cgroup of its own per kernel
 * with memory and pids limits (null: none, as for containers, which have the engine's), a uid of its
 * own per kernel from a range (null: not needed, see {@link #decide}), and the rlimits the harness
 * sets in every kernel.
 *
 * @param launcher the launcher --sandbox chose, as it starts one kernel (without the cgroup)
 * @param asked the --sandbox mode that chose it ("auto", "bwrap"...), or its own name when given directly
 */
public record HostPolicy(
        KernelLauncher launcher, String asked, CgroupLimits cgroups, KernelUids uids, Map<String, Object> rlimits) {

    /** The processes a kernel may run, by whichever of a pids cgroup, RLIMIT_NPROC or the engine binds it. */
    static final int KERNEL_PIDS = 256;
    /** Room above the data rlimit in a kernel's memory cgroup, for its other processes and its /tmp. */
    static final long CGROUP_HEADROOM_BYTES = 512L * 1024 * 1024;

    public HostPolicy {
        rlimits = Map.copyOf(rlimits);
    }

    /**
     * The policy for {@code launcher} on this machine. A cgroup per kernel where the machine lets the
     * server make them (not for containers). As root under bwrap without a pids cgroup, kernels have
     * no user namespace of their own and would all share uid 65534: then each gets a uid of its own
     * from {@link Capacity#firstKernelUid}, handed to the launcher here, so that RLIMIT_NPROC counts
     * its processes alone.
     */
    public static HostPolicy decide(Settings settings, KernelLauncher launcher, String asked) {
        CgroupLimits cgroups = launcher instanceof ContainerLauncher
                ? null
                : CgroupLimits.detect(cgroupMemoryBytes(settings), KERNEL_PIDS).orElse(null);
        boolean pidsByCgroup = cgroups != null && cgroups.limitsPids();
        KernelUids uids = null;
        if (!pidsByCgroup && launcher instanceof BwrapLauncher bwrap && bwrap.privileged()) {
            uids = new KernelUids(
                    settings.capacity().firstKernelUid(), settings.capacity().kernelUids());
            bwrap.uidPerKernel(uids);
        }
        return new HostPolicy(launcher, asked, cgroups, uids, rlimits(settings, launcher, pidsByCgroup));
    }

    /** True if kernels run in containers, whose Python is the image's. */
    boolean containerKernels() {
        return launcher instanceof ContainerLauncher;
    }

    /** True if each kernel's processes are limited by a pids cgroup of its own. */
    boolean pidsByCgroup() {
        return cgroups != null && cgroups.limitsPids();
    }

    /** The most kernels that can run at once for want of uids (unbounded without a uid per kernel). */
    int uidCap() {
        return uids == null ? Integer.MAX_VALUE : uids.count();
    }

    /** How each kernel's processes are kept apart from every other kernel's. */
    String processesPerKernel() {
        if (pidsByCgroup()) {
            return "a pids cgroup each (" + KERNEL_PIDS + ")";
        }
        if (uids != null) {
            return "a uid each from " + uids.first() + " (RLIMIT_NPROC " + KERNEL_PIDS + ")";
        }
        return launcher.isolatesUser()
                ? "RLIMIT_NPROC " + KERNEL_PIDS + " in a user namespace each"
                : "not limited per kernel";
    }

    /** The policy in one line, for the log at start. */
    @Override
    public String toString() {
        String cgroup = cgroups == null
                ? containerKernels() ? "the container engine's" : "none"
                : cgroups.limitsPids() ? "memory and pids limits" : "a memory limit";
        return "sandbox " + launcher.name() + " (asked for: " + asked + "); cgroup per kernel: " + cgroup
                + "; processes per kernel: " + processesPerKernel() + "; rlimits: " + new TreeMap<>(rlimits);
    }

    /**
     * The cgroup memory limit: above the kernel's own data rlimit, so that one process running out
     * gets a MemoryError (its variables survive); the cgroup bounds the whole sandbox, children and
     * /tmp included.
     */
    static long cgroupMemoryBytes(Settings settings) {
        return settings.memoryLimitBytes() > 0 ? dataLimitBytes(settings) + CGROUP_HEADROOM_BYTES : 0;
    }

    /** Twice the variables' limit plus 1 GiB of heap for the interpreter and working copies. */
    static long dataLimitBytes(Settings settings) {
        return 2 * settings.memoryLimitBytes() + (1L << 30);
    }

    /**
     * The largest file a kernel may write: a snapshot file holds one variable, which may be as large
     * as the kernel's heap.
     */
    public static long fileSizeLimitBytes(long memoryLimitBytes) {
        return Math.max(1L << 30, memoryLimitBytes > 0 ? 2 * memoryLimitBytes + (1L << 30) : 0);
    }

    /**
     * rlimits for every kernel. Data (heap, not address space: threads and malloc arenas reserve far
     * more than they use) gets twice the variables' limit plus 1 GiB. Processes: a pids cgroup per
     * kernel where there is one, and then no RLIMIT_NPROC, which counts every process of the uid (all
     * kernels' alike, when they share one) and does not bind root; otherwise RLIMIT_NPROC only under a
     * uid, or a user namespace, of the kernel's own.
     */
    static Map<String, Object> rlimits(Settings settings, KernelLauncher launcher, boolean pidsByCgroup) {
        Map<String, Object> limits = new HashMap<>();
        if (settings.memoryLimitBytes() > 0) {
            limits.put("data", dataLimitBytes(settings));
        }
        limits.put("nofile", 4096);
        // no file a kernel may write (spool, snapshot, /tmp) can be larger than the disk limit
        limits.put("fsize", Math.min(fileSizeLimitBytes(settings.memoryLimitBytes()), settings.diskLimitBytes()));
        limits.put(
                "cpu_per_request_s",
                settings.maxTimeout().toSeconds() * Runtime.getRuntime().availableProcessors() + 10);
        if (launcher.isolatesUser() && !pidsByCgroup) {
            limits.put("nproc", KERNEL_PIDS);
        }
        return limits;
    }

    /** The cgroup limits, if kernels have cgroups of their own. */
    Optional<CgroupLimits> cgroupLimits() {
        return Optional.ofNullable(cgroups);
    }
}

package dev.rlmmcp.core;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.core.kernel.CgroupLimits;
import dev.rlmmcp.core.kernel.ContainerLauncher;
import dev.rlmmcp.core.kernel.Harness;
import dev.rlmmcp.core.kernel.Kernel;
import dev.rlmmcp.core.kernel.KernelDiedException;
import dev.rlmmcp.core.kernel.KernelLauncher;
import dev.rlmmcp.core.kernel.KernelSpec;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import dev.rlmmcp.core.kernel.PythonLocator;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/** Starts kernels for sessions: the launcher, the harness and the settings every kernel shares. */
public final class KernelFactory implements AutoCloseable {

    static final long CGROUP_HEADROOM_BYTES = 512L * 1024 * 1024;
    static final int KERNEL_PIDS = 256;

    private final Settings settings;
    private final KernelLauncher launcher;
    private final boolean cgroupLimits;
    private final ObjectMapper json;
    private final ScheduledExecutorService timer;
    private final Path harness;
    private final String harnessConfig;
    private volatile PythonLocator.Python python;

    public KernelFactory(Settings settings, KernelLauncher launcher, ObjectMapper json) {
        this.settings = settings;
        Optional<CgroupLimits> limits = launcher instanceof ContainerLauncher ? Optional.empty()
                : CgroupLimits.detect(cgroupMemoryBytes(settings), KERNEL_PIDS);
        this.cgroupLimits = limits.isPresent();
        this.launcher = limits.map(l -> l.around(launcher)).orElse(launcher);
        this.json = json;
        this.timer = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon().name("kernel-watchdog").factory());
        this.harness = Harness.install(settings.runtimeDir());
        try {
            this.harnessConfig = json.writeValueAsString(Map.of(
                    "memory_limit_bytes", settings.memoryLimitBytes(),
                    "cleanup_threshold", settings.cleanupThreshold(),
                    "cleanup_target", settings.cleanupTarget(),
                    "output_cap", settings.outputCap(),
                    "allowed_imports", settings.importPolicy().allowed(),
                    "blocked_imports", settings.importPolicy().blocked(),
                    "limits", rlimits(settings, launcher)));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
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
     * more than they use) gets twice the variables' limit plus 1 GiB; processes only under a uid of
     * the kernel's own, since RLIMIT_NPROC counts every process of the uid (and does not bind root).
     */
    static Map<String, Object> rlimits(Settings settings, KernelLauncher launcher) {
        Map<String, Object> limits = new java.util.HashMap<>();
        if (settings.memoryLimitBytes() > 0) {
            limits.put("data", dataLimitBytes(settings));
        }
        limits.put("nofile", 4096);
        limits.put("fsize", fileSizeLimitBytes(settings.memoryLimitBytes()));
        limits.put("cpu_per_request_s",
                settings.maxTimeout().toSeconds() * Runtime.getRuntime().availableProcessors() + 10);
        if (launcher.isolatesUser()) {
            limits.put("nproc", 256);
        }
        return limits;
    }

    /**
     * The interpreter kernels run on, found on first use (not at start-up, which it would slow);
     * fails with the locator's message if there is no usable one.
     */
    public PythonLocator.Python python() {
        PythonLocator.Python found = python;
        if (found == null) {
            synchronized (this) {
                if (python == null) {
                    try {
                        python = PythonLocator.locate(settings.python());
                    } catch (IllegalStateException e) {
                        throw new RlmException(ErrorCode.KERNEL_UNAVAILABLE, e.getMessage(), null,
                                "install python3 (3.10 or newer) or set --python / RLM_PYTHON");
                    }
                }
                found = python;
            }
        }
        return found;
    }

    public Kernel start(String label) {
        return start(label, null, null);
    }

    /**
     * A kernel that may also write {@code snapshotDir} (null: nowhere but its own /tmp and spool) and
     * does not see {@code stateDir} (null: nothing hidden).
     */
    public Kernel start(String label, Path snapshotDir, Path stateDir) {
        PythonLocator.Python interpreter = python();
        List<Path> readable = new java.util.ArrayList<>(interpreter.prefixes());
        readable.add(settings.dataRoot());
        KernelSpec spec = new KernelSpec(interpreter.executable(), harness, List.of(harnessConfig), settings.dataRoot(),
                List.copyOf(readable), snapshotDir, stateDir);
        try {
            return Kernel.start(launcher, spec, json, timer, label, settings.kernelStartTimeout());
        } catch (IOException | KernelDiedException e) {
            throw new RlmException(ErrorCode.KERNEL_UNAVAILABLE,
                    "cannot start a Python kernel with " + settings.python() + ": " + e.getMessage(), null,
                    "check that --python / RLM_PYTHON names a working python3 (3.10 or newer)");
        }
    }

    public Settings settings() {
        return settings;
    }

    public ObjectMapper json() {
        return json;
    }

    /** Where a kernel sees its writable snapshot directory. */
    public Path writableDirInside(Path hostDir) {
        return launcher.writableDirInside(hostDir);
    }

    public String launcherName() {
        return launcher.name();
    }

    /** Which cgroup hierarchy the machine offers: "v2", "v1" or "none". */
    public String cgroup() {
        return Cgroups.version();
    }

    /** True if each kernel runs in a cgroup of its own with memory and pids limits (containers have the engine's). */
    public boolean cgroupLimits() {
        return cgroupLimits;
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}

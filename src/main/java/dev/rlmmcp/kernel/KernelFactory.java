package dev.rlmmcp.kernel;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.base.Bytes;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.kernel.channel.Kernel;
import dev.rlmmcp.kernel.channel.KernelDiedException;
import dev.rlmmcp.kernel.channel.KernelReply;
import dev.rlmmcp.kernel.process.CgroupLimits;
import dev.rlmmcp.kernel.process.DelegatingLauncher;
import dev.rlmmcp.kernel.process.Harness;
import dev.rlmmcp.kernel.process.KernelHandle;
import dev.rlmmcp.kernel.process.KernelLauncher;
import dev.rlmmcp.kernel.process.KernelSpec;
import dev.rlmmcp.kernel.process.PythonLocator;
import dev.rlmmcp.kernel.protocol.KernelRequest;
import dev.rlmmcp.kernel.protocol.Restored;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

/** Starts kernels for sessions: the launcher, the harness and the settings every kernel shares. */
public final class KernelFactory implements AutoCloseable {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(KernelFactory.class);

    private final Settings settings;
    private final KernelLauncher launcher;
    private final HostPolicy policy;
    private final KernelBudget budget;
    private final ObjectMapper json;
    private final ScheduledExecutorService timer;
    /**
     * The one thread that starts every kernel process, alive as long as this factory. Linux sends a
     * parent-death signal (bwrap's --die-with-parent, PR_SET_PDEATHSIG) when the <em>thread</em> that
     * started a child ends, not its process: a kernel started from a pooled request thread (Jetty's,
     * stdio's, a virtual thread's carrier) was SIGKILLed whenever that pool let the thread go, at an idle
     * time-out or at shutdown before its snapshot. Started from here, kernels die with this server (or
     * when {@link #close} ends this thread, after every session has stopped its kernel), never earlier.
     */
    private final ExecutorService starter = Executors.newSingleThreadExecutor(
            Thread.ofPlatform().daemon().name("kernel-starter").factory());
    /**
     * The harness kernels run: none until a kernel needs it (reading it from the jar to name its directory
     * would slow the start), its sources until the interpreter is located, then (not for containers, whose
     * Python is the image's) the one holding that interpreter's bytecode as well.
     */
    private volatile Path harness;

    /** Written at the first kernel's start, not the factory's: a stdio start's first answers wait for the factory. */
    private volatile String harnessConfig;

    private volatile PythonLocator.Python python;
    private volatile WarmKernels warm;

    /** Kernels started by {@code launcher} under the policy this host gives it ({@link HostPolicy#decide}). */
    public KernelFactory(Settings settings, KernelLauncher launcher, ObjectMapper json) {
        this(settings, HostPolicy.decide(settings, launcher, launcher.name()), json);
    }

    public KernelFactory(Settings settings, HostPolicy policy, ObjectMapper json) {
        this.settings = settings;
        this.policy = policy;
        this.json = json;
        Optional<CgroupLimits> limits = policy.cgroupLimits();
        // what a kernel holds: from its cgroup where it has one (its /tmp included), else its processes' RSS
        this.budget = KernelBudget.of(
                settings.capacity(),
                HostPolicy.KERNEL_PIDS,
                policy.uidCap(),
                limits.<ToLongFunction<KernelBudget.Slot>>map(cgroup -> slot -> slot.process() == null
                                ? KernelBudget.START_BYTES
                                : cgroup.heldBytes(slot.process().pid())
                                        .orElseGet(() -> KernelBudget.residentBytes(slot)))
                        .orElse(KernelBudget::residentBytes));
        this.launcher =
                startingOn(starter, limits.map(l -> l.around(policy.launcher())).orElse(policy.launcher()));
        log.info(
                "{}; capacity: up to {} kernels holding up to {} together",
                policy,
                budget.maxKernels(),
                Bytes.human(budget.maxBytes()));
        this.timer = watchdogTimer();
    }

    /**
     * The timer of every call's watchdog. Each call schedules its timers and cancels them when it ends,
     * long before they are due: removed at once, they do not pile up (calls/s x the time limit of them)
     * in the queue. A timer that becomes the queue's first wakes the timer's thread: a tick every half
     * second stays first, so that a call's timers (a second away or more) wake nothing.
     */
    private static ScheduledExecutorService watchdogTimer() {
        ScheduledThreadPoolExecutor watchdogs = new ScheduledThreadPoolExecutor(
                1, Thread.ofPlatform().daemon().name("kernel-watchdog").factory());
        watchdogs.setRemoveOnCancelPolicy(true);
        watchdogs.scheduleAtFixedRate(() -> {}, 500, 500, TimeUnit.MILLISECONDS);
        return watchdogs;
    }

    private String harnessConfig() {
        String config = harnessConfig;
        if (config == null) {
            config = harnessConfig(settings, policy, json);
            harnessConfig = config;
        }
        return config;
    }

    /** The harness's settings, the same for every kernel: its first argument. */
    private static String harnessConfig(Settings settings, HostPolicy policy, ObjectMapper json) {
        try {
            return json.writeValueAsString(Map.of(
                    "memory_limit_bytes", settings.memoryLimitBytes(),
                    "cleanup_threshold", settings.cleanupThreshold(),
                    "cleanup_target", settings.cleanupTarget(),
                    "output_cap", settings.outputCap(),
                    "disk_limit_bytes", settings.diskLimitBytes(),
                    // fsync only against power loss (--durable-replies): a process that dies loses nothing written
                    "sync_snapshots", settings.syncSnapshots(),
                    "allowed_imports", settings.importPolicy().allowed(),
                    "blocked_imports", settings.importPolicy().blocked(),
                    "limits", policy.rlimits()));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code launcher}, its processes started on {@code thread}; the caller waits for each start. */
    static KernelLauncher startingOn(ExecutorService thread, KernelLauncher launcher) {
        return new DelegatingLauncher(launcher) {
            @Override
            public KernelHandle start(KernelSpec spec) throws IOException {
                try {
                    // join, not get: an interrupted caller must not leave a started process unowned
                    return CompletableFuture.supplyAsync(
                                    () -> {
                                        try {
                                            return inner.start(spec);
                                        } catch (IOException e) {
                                            throw new CompletionException(e);
                                        }
                                    },
                                    thread)
                            .join();
                } catch (CompletionException e) {
                    if (e.getCause() instanceof IOException io) {
                        throw io;
                    }
                    throw e.getCause() instanceof RuntimeException r ? r : e;
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    throw new IOException("the server is stopping: no new kernel is started");
                }
            }
        };
    }

    /** The harness as it is now, its sources installed if nothing is yet. */
    private Path harness() {
        Path installed = harness;
        if (installed == null) {
            synchronized (this) {
                if (harness == null) {
                    harness = Harness.install(settings.runtimeDir());
                }
                installed = harness;
            }
        }
        return installed;
    }

    /**
     * The interpreter kernels run on, found on first use (not at start-up, which it would slow), and
     * the harness compiled for it (once per harness and interpreter build; then kernels start from its
     * bytecode); fails with the locator's message if there is no usable one.
     */
    public PythonLocator.Python python() {
        PythonLocator.Python found = python;
        if (found == null) {
            synchronized (this) {
                if (python == null) {
                    try {
                        PythonLocator.Python located = PythonLocator.locate(settings.python());
                        if (!policy.containerKernels()) {
                            harness = Harness.install(settings.runtimeDir(), located);
                        }
                        python = located;
                    } catch (IllegalStateException e) {
                        throw new RlmException(
                                ErrorCode.KERNEL_UNAVAILABLE,
                                e.getMessage(),
                                null,
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
     * A kernel that may also write {@code snapshotDir} (null: nowhere but its own /tmp and spool; made
     * if missing) and does not see {@code stateDir} (null: nothing hidden): a warm one where one fits,
     * else one started now. At capacity with no kernel idle, refused with CAPACITY after a few seconds.
     */
    public Kernel start(String label, Path snapshotDir, Path stateDir) {
        return start(label, snapshotDir, stateDir, null);
    }

    /**
     * As {@link #start(String, Path, Path)}, but at capacity it waits in line for a place up to
     * {@code wait} (null: a few seconds), for kernels that are used and closed soon after: a child
     * RLM's, a throwaway run_python's. Closing a kernel gives its place to the next in line once its
     * process has exited. Throws CAPACITY once {@code wait} has passed, INTERRUPTED (the thread's
     * interrupt kept) if interrupted while in line.
     */
    public Kernel start(String label, Path snapshotDir, Path stateDir, Duration wait) {
        WarmKernels pool = warm;
        if (pool != null && pool.serves(snapshotDir, stateDir)) {
            Kernel claimed = pool.claim(label, snapshotDir);
            if (claimed != null) {
                return claimed;
            }
        }
        if (snapshotDir != null) {
            try {
                Files.createDirectories(snapshotDir);
            } catch (IOException e) {
                throw new RlmException(
                        ErrorCode.KERNEL_UNAVAILABLE,
                        "cannot make the snapshot directory " + snapshotDir + " of " + label + ": " + e.getMessage(),
                        null,
                        "check that the state directory is writable");
            }
        }
        KernelBudget.Slot slot = wait == null ? budget.acquire() : budget.acquire(wait);
        Kernel kernel;
        try {
            kernel = launch(slot, label, snapshotDir, stateDir);
        } catch (IOException e) {
            throw new RlmException(
                    ErrorCode.KERNEL_UNAVAILABLE,
                    "cannot start a Python kernel with " + settings.python() + ": " + e.getMessage(),
                    null,
                    "check that --python / RLM_PYTHON names a working python3 (3.10 or newer)");
        }
        try {
            kernel.claim(label, snapshotDir);
        } catch (IOException e) {
            kernel.close();
            throw new RlmException(
                    ErrorCode.KERNEL_UNAVAILABLE,
                    "cannot give the kernel of " + label + " its snapshot directory " + snapshotDir + ": "
                            + e.getMessage(),
                    null,
                    "check that the state directory is writable");
        }
        return kernel;
    }

    /**
     * From now on, {@link Capacity#warmKernels} kernels are kept started ahead of need for sessions whose
     * snapshot directories are in {@code snapshotRoot} (null: sessions kept in memory only) and that
     * must not see {@code stateDir} (or null). Idempotent; nothing with --warm-kernels 0.
     */
    public void keepWarm(Path snapshotRoot, Path stateDir) {
        keepWarm(snapshotRoot, stateDir, WarmKernels.IDLE_BEFORE_MAKING_ROOM);
    }

    /** As {@link #keepWarm(Path, Path)}, a session's kernel making way for a warm one once idle {@code idle}. */
    void keepWarm(Path snapshotRoot, Path stateDir, Duration idle) {
        keepWarm(snapshotRoot, stateDir, idle, WarmKernels.Growth.within(budget));
    }

    /** As {@link #keepWarm(Path, Path, Duration)}, the pool growing after bursts as {@code growth} says. */
    synchronized void keepWarm(Path snapshotRoot, Path stateDir, Duration idle, WarmKernels.Growth growth) {
        if (warm != null || settings.capacity().warmKernels() == 0) {
            return;
        }
        try {
            warm = new WarmKernels(
                    settings.capacity().warmKernels(),
                    growth,
                    snapshotRoot,
                    stateDir,
                    budget,
                    this::launchWarm,
                    settings.kernelStartTimeout(),
                    timer,
                    idle);
        } catch (IOException e) {
            log.warn("no warm kernels: {} cannot hold their directories: {}", snapshotRoot, e.toString());
        }
    }

    /** How many warm kernels are ready to be claimed. */
    public int warmKernels() {
        WarmKernels pool = warm;
        return pool == null ? 0 : pool.ready();
    }

    /** How many warm kernels the pool keeps ready now: --warm-kernels, or more after a burst of new kernels. */
    public int warmTarget() {
        WarmKernels pool = warm;
        return pool == null ? 0 : pool.target();
    }

    /** How many kernels run for sessions: those of the budget that are not warm, ready or starting. */
    public int sessionKernels() {
        WarmKernels pool = warm;
        return pool == null ? budget.kernels() : pool.notHeld();
    }

    /**
     * A warm kernel: started, its spare directory (if any) attached and restored (empty), so that a new
     * session whose kernel sees its directory at the same path need not restore it again.
     */
    private Kernel launchWarm(KernelBudget.Slot slot, String label, Path spareDir, Path hiddenDir) throws IOException {
        Kernel kernel = launch(slot, label, spareDir, hiddenDir);
        if (spareDir == null) {
            return kernel;
        }
        try {
            kernel.claim(label, spareDir);
            KernelReply<Restored> reply = kernel.call(
                    new KernelRequest.Restore(writableDirInside(spareDir).toString()),
                    settings.maxTimeout(),
                    settings.interruptGrace());
            if (!reply.ok()) {
                throw new IOException(
                        "it cannot attach its directory: " + reply.refusal().message());
            }
            return kernel;
        } catch (IOException | KernelDiedException | RuntimeException e) {
            kernel.close();
            throw e instanceof IOException io ? io : new IOException(e.getMessage(), e);
        }
    }

    /** A kernel started in {@code slot} (given back if it cannot start), not yet claimed. */
    private Kernel launch(KernelBudget.Slot slot, String label, Path writableDir, Path hiddenDir) throws IOException {
        PythonLocator.Python interpreter = policy.containerKernels() ? null : python();
        Path executable = interpreter == null ? Path.of(settings.python()) : interpreter.executable();
        KernelSpec spec = new KernelSpec(
                executable,
                harness(),
                List.of(harnessConfig()),
                settings.dataRoot(),
                readable(interpreter),
                writableDir,
                hiddenDir);
        try {
            Kernel kernel = Kernel.start(
                    counted(slot), spec, json, timer, label, settings.kernelStartTimeout(), settings.outputCap());
            // a closed kernel's place goes to the next in line at once, not when the exit callback runs
            kernel.whenClosed(slot::release);
            return kernel;
        } catch (IOException | RuntimeException e) {
            slot.release();
            throw e;
        } catch (KernelDiedException e) {
            slot.release();
            throw new IOException(e.getMessage(), e);
        }
    }

    /** The launcher, with the process it starts counted in {@code slot} until it exits. */
    private KernelLauncher counted(KernelBudget.Slot slot) {
        return new DelegatingLauncher(launcher) {
            @Override
            public KernelHandle start(KernelSpec spec) throws IOException {
                KernelHandle kernel = inner.start(spec);
                slot.track(kernel.process());
                kernel.process().onExit().thenRun(slot::release);
                return kernel;
            }
        };
    }

    /**
     * Runs the interpreter once where kernels run and checks that it is the one configured, with the
     * same build and installation (a sandbox that cannot show a Python's own libpython may load
     * another one of the same version, silently). Containers run their image's Python: nothing to check, null.
     */
    public PythonLocator.Python verifyPython() {
        if (policy.containerKernels()) {
            return null;
        }
        PythonLocator.Python configured = python();
        Path probe = PythonLocator.installProbe(settings.runtimeDir());
        KernelSpec spec =
                new KernelSpec(configured.executable(), probe, List.of(), settings.dataRoot(), readable(configured));
        return SandboxedPythonCheck.verify(launcher, spec, configured, settings.kernelStartTimeout());
    }

    /** The interpreter, if it has been located already (null before the first kernel or check, and for containers). */
    public PythonLocator.Python pythonIfKnown() {
        return python;
    }

    /**
     * What a kernel reads: its interpreter's directories (none for a container, which has its own) and
     * the data root, as given and with symlinks resolved.
     */
    private List<Path> readable(PythonLocator.Python interpreter) {
        java.util.Set<Path> dirs =
                new java.util.LinkedHashSet<>(interpreter == null ? List.of() : interpreter.readableDirs());
        dirs.add(settings.dataRoot());
        try {
            dirs.add(settings.dataRoot().toRealPath());
        } catch (IOException e) {
            // a data root that is gone fails at the first load, with its own message
        }
        return List.copyOf(dirs);
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
        return policy.cgroups() != null;
    }

    /** How this host runs kernels: decided once, at start. */
    public HostPolicy hostPolicy() {
        return policy;
    }

    /** How many kernels run and may run, and the memory they hold and may hold. */
    public KernelBudget budget() {
        return budget;
    }

    /** Stops the warm kernels, and starts no more: the server is stopping. */
    public void stopWarming() {
        WarmKernels pool = warm;
        if (pool != null) {
            pool.close();
        }
    }

    @Override
    public void close() {
        stopWarming();
        timer.shutdownNow();
        // its thread ends: any kernel still running gets its parent-death signal
        starter.shutdown();
    }
}

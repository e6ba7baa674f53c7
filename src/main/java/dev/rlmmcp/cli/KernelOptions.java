package dev.rlmmcp.cli;

import dev.rlmmcp.bridge.ServerConfigs;
import dev.rlmmcp.core.Limits;
import dev.rlmmcp.data.S3Settings;
import dev.rlmmcp.data.S3Store;
import dev.rlmmcp.kernel.Capacity;
import dev.rlmmcp.kernel.HostPolicy;
import dev.rlmmcp.kernel.ImportPolicy;
import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.kernel.process.ContainerLauncher.ContainerSettings;
import dev.rlmmcp.kernel.process.KernelLauncher;
import dev.rlmmcp.kernel.process.Sandbox;
import dev.rlmmcp.store.ClusterSessionDatabase;
import dev.rlmmcp.store.S3SnapshotStore;
import dev.rlmmcp.store.SnapshotPrune;
import dev.rlmmcp.store.StateStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** Options shared by every way of running the server: kernels, data, limits. */
final class KernelOptions {

    @Option(
            names = "--sandbox",
            paramLabel = "MODE",
            defaultValue = "${env:RLM_SANDBOX:-auto}",
            description =
                    "How kernels are isolated: auto (the strongest available), bwrap, container or process (RLM_SANDBOX; default: ${DEFAULT-VALUE}).")
    String sandbox;

    @Option(
            names = "--container-image",
            paramLabel = "IMAGE",
            defaultValue = "${env:RLM_CONTAINER_IMAGE}",
            description = "Kernel image for --sandbox container (with python3; RLM_CONTAINER_IMAGE; default: "
                    + ContainerSettings.DEFAULT_IMAGE + "; auto uses containers only when this is set).")
    String containerImage;

    @Option(
            names = "--container-runtime",
            paramLabel = "RT",
            defaultValue = "${env:RLM_CONTAINER_RUNTIME:-auto}",
            description =
                    "auto (podman, then docker), podman, docker, or a path to either (RLM_CONTAINER_RUNTIME; default: ${DEFAULT-VALUE}).")
    String containerRuntime;

    @Option(
            names = "--python",
            paramLabel = "CMD",
            defaultValue = "${env:RLM_PYTHON:-python3}",
            description = "Python interpreter for kernels, 3.10+ (RLM_PYTHON; default: ${DEFAULT-VALUE}).")
    String python;

    @Option(
            names = "--data-root",
            paramLabel = "DIR",
            defaultValue = "${env:RLM_DATA_ROOT:-.}",
            description = "Directory rlm_load_file may read from (RLM_DATA_ROOT; default: the current directory).")
    Path dataRoot;

    @Option(
            names = "--max-memory-mb",
            paramLabel = "MB",
            defaultValue = "${env:RLM_MAX_MEMORY_MB:-1024}",
            description = "Memory limit for a session's variables (RLM_MAX_MEMORY_MB; default: ${DEFAULT-VALUE}).")
    long maxMemoryMb;

    @Option(
            names = "--max-kernels",
            paramLabel = "N",
            defaultValue = "${env:RLM_MAX_KERNELS:-0}",
            description = "Most kernels running at once; past it, idle sessions' kernels are snapshotted and stopped "
                    + "(their variables come back on their next call), else the call is refused with CAPACITY "
                    + "(RLM_MAX_KERNELS; default: 0, from the machine: half its pids at 256 per kernel).")
    int maxKernels;

    @Option(
            names = "--max-total-memory-mb",
            paramLabel = "MB",
            defaultValue = "${env:RLM_MAX_TOTAL_MEMORY_MB:-0}",
            description =
                    "Most memory the running kernels may hold together (their resident memory, measured); "
                            + "past it as for --max-kernels (RLM_MAX_TOTAL_MEMORY_MB; default: 0, 75%% of the machine's memory).")
    long maxTotalMemoryMb;

    @Option(
            names = "--warm-kernels",
            paramLabel = "N",
            defaultValue = "${env:RLM_WARM_KERNELS:-" + Capacity.DEFAULT_WARM_KERNELS + "}",
            description = "Kernels kept started ahead of need, so that a new session or run_python gets one at once "
                    + "(RLM_WARM_KERNELS; default: ${DEFAULT-VALUE}; 0: none); after a burst of new kernels the pool "
                    + "grows to the burst's size (at most 32) for a while. They count as kernels for --max-kernels, "
                    + "and at capacity take the place of a session's kernel only once it has been idle a minute, "
                    + "its variables in a snapshot.")
    int warmKernels;

    @Option(
            names = "--kernel-uids",
            paramLabel = "FROM-TO",
            defaultValue = "${env:RLM_KERNEL_UIDS:-" + Capacity.DEFAULT_FIRST_KERNEL_UID + "-"
                    + (Capacity.DEFAULT_FIRST_KERNEL_UID + Capacity.DEFAULT_KERNEL_UIDS - 1) + "}",
            description = "As root without a pids cgroup, the uids kernels run as, one each, instead of all as 65534 "
                    + "(RLM_KERNEL_UIDS; default: ${DEFAULT-VALUE}).")
    String kernelUids;

    @Option(
            names = "--max-disk-mb",
            paramLabel = "MB",
            defaultValue = "${env:RLM_MAX_DISK_MB}",
            description =
                    "Disk a session's kernel may fill, in its spool ($RLM_SPOOL, a tmpfs) and in its snapshot directory each (RLM_MAX_DISK_MB; default: twice --max-memory-mb, at least 2048).")
    Long maxDiskMb;

    @Option(
            names = "--cleanup-threshold",
            paramLabel = "PCT",
            defaultValue = "${env:RLM_CLEANUP_THRESHOLD:-80}",
            description =
                    "Percent of the memory limit at which least-recently-used variables are dropped (RLM_CLEANUP_THRESHOLD; default: ${DEFAULT-VALUE}).")
    double cleanupThreshold;

    @Option(
            names = "--cleanup-target",
            paramLabel = "PCT",
            defaultValue = "${env:RLM_CLEANUP_TARGET:-60}",
            description =
                    "Percent of the memory limit that cleanup brings usage down to (RLM_CLEANUP_TARGET; default: ${DEFAULT-VALUE}).")
    double cleanupTarget;

    @Option(
            names = "--output-cap",
            paramLabel = "CHARS",
            defaultValue = "${env:RLM_OUTPUT_CAP:-20000}",
            description =
                    "Characters of stdout/stderr returned per call before the rest is cut (RLM_OUTPUT_CAP; default: ${DEFAULT-VALUE}).")
    int outputCap;

    @Option(
            names = "--timeout-s",
            paramLabel = "S",
            defaultValue = "${env:RLM_TIMEOUT_S:-30}",
            description = "Default per-call timeout for rlm_execute (RLM_TIMEOUT_S; default: ${DEFAULT-VALUE}).")
    long timeoutS;

    @Option(
            names = "--max-timeout-s",
            paramLabel = "S",
            defaultValue = "${env:RLM_MAX_TIMEOUT_S:-600}",
            description =
                    "Largest timeout_s a call may ask for; also bounds loads (RLM_MAX_TIMEOUT_S; default: ${DEFAULT-VALUE}).")
    long maxTimeoutS;

    @Option(
            names = "--interrupt-grace-ms",
            paramLabel = "MS",
            defaultValue = "${env:RLM_INTERRUPT_GRACE_MS:-2000}",
            description =
                    "How long interrupted code may take to stop before the kernel is killed (RLM_INTERRUPT_GRACE_MS; default: ${DEFAULT-VALUE}).")
    long interruptGraceMs;

    @Option(
            names = "--idle-timeout-s",
            paramLabel = "S",
            defaultValue = "${env:RLM_IDLE_TIMEOUT_S:-3600}",
            description =
                    "Seconds a session may sit idle before its kernel is stopped and it is marked expired (RLM_IDLE_TIMEOUT_S; default: ${DEFAULT-VALUE}).")
    long idleTimeoutS;

    @Option(
            names = "--max-steps",
            paramLabel = "N",
            defaultValue = "${env:RLM_MAX_STEPS}",
            description = "Default max_steps for sessions made by rlm_init_context (RLM_MAX_STEPS; default: none).")
    Integer maxSteps;

    @Option(
            names = "--max-runtime-ms",
            paramLabel = "MS",
            defaultValue = "${env:RLM_MAX_RUNTIME_MS}",
            description = "Default max_runtime_ms for rlm_init_context sessions (RLM_MAX_RUNTIME_MS; default: none).")
    Long maxRuntimeMs;

    @Option(
            names = "--budget-limit",
            paramLabel = "BYTES",
            defaultValue = "${env:RLM_BUDGET_LIMIT}",
            description =
                    "Default budget_limit (bytes of I/O) for rlm_init_context sessions (RLM_BUDGET_LIMIT; default: none).")
    Long budgetLimit;

    @Option(
            names = "--blocked-imports",
            paramLabel = "MODULES",
            defaultValue = "${env:RLM_BLOCKED_IMPORTS:-" + ImportPolicy.DEFAULT_BLOCKED + "}",
            description =
                    "Modules user code may not import by name, comma-separated, or none: a guard rail against mistakes, NOT security (RLM_BLOCKED_IMPORTS; default: ${DEFAULT-VALUE}).")
    String blockedImports;

    @Option(
            names = "--allowed-imports",
            paramLabel = "MODULES",
            defaultValue = "${env:RLM_ALLOWED_IMPORTS:-none}",
            description =
                    "If set, the only modules user code may import by name, comma-separated (RLM_ALLOWED_IMPORTS; default: none, i.e. all not blocked).")
    String allowedImports;

    @Option(
            names = "--runtime-dir",
            paramLabel = "DIR",
            defaultValue = "${env:RLM_RUNTIME_DIR}",
            description =
                    "Private directory for the kernel harness (RLM_RUNTIME_DIR; default: $XDG_RUNTIME_DIR/rlm-mcp or the temp dir).")
    Path runtimeDir;

    @Option(
            names = "--mcp-config",
            paramLabel = "FILE",
            description =
                    "MCP servers run_python may call, as {\"mcpServers\": {name: {command, args, env} | {url, headers}}}; repeatable; these win over discovered ones.")
    List<Path> mcpConfigs = new java.util.ArrayList<>();

    @Option(
            names = "--mcp-discovery",
            paramLabel = "BOOL",
            defaultValue = "${env:RLM_MCP_DISCOVERY:-true}",
            arity = "1",
            description =
                    "Also look for MCP servers in the usual config files: ~/.claude.json, .mcp.json, mcp-servers/*.json, ~/.config/mcp/servers/*.json, claude_desktop_config.json (RLM_MCP_DISCOVERY; default: ${DEFAULT-VALUE}).")
    boolean mcpDiscovery;

    @Option(
            names = "--mcp-idle-timeout-s",
            paramLabel = "S",
            defaultValue = "${env:RLM_MCP_IDLE_TIMEOUT_S:-300}",
            description =
                    "Seconds a bridged MCP server may sit unused before it is stopped; the next call starts it again (RLM_MCP_IDLE_TIMEOUT_S; default: ${DEFAULT-VALUE}).")
    long mcpIdleTimeoutS;

    /** Where run_python's bridged MCP servers are defined. */
    ServerConfigs.Locations mcpLocations(CommandSpec spec) {
        require(spec, mcpIdleTimeoutS >= 1, "--mcp-idle-timeout-s must be at least 1, not " + mcpIdleTimeoutS);
        for (Path file : mcpConfigs) {
            require(spec, Files.isRegularFile(file), "--mcp-config " + file + " is not a readable file");
        }
        return new ServerConfigs.Locations(
                UserHome.home(System.getenv()), Path.of("").toAbsolutePath(), mcpConfigs, mcpDiscovery);
    }

    Duration mcpIdleTimeout() {
        return Duration.ofSeconds(mcpIdleTimeoutS);
    }

    @Option(
            names = "--state-dir",
            paramLabel = "DIR",
            defaultValue = "${env:RLM_STATE_DIR}",
            description = "Where sessions, traces and variable snapshots are kept across restarts; one server at a "
                    + "time (RLM_STATE_DIR; default: one per data root, under $XDG_DATA_HOME/rlm-mcp/projects, "
                    + "else ~/.local/share/rlm-mcp/projects).")
    Path stateDir;

    @Option(
            names = "--ephemeral",
            defaultValue = "${env:RLM_EPHEMERAL:-false}",
            description = "Keep nothing on disk: sessions and variables end with the server; memory pressure drops "
                    + "variables instead of spilling them (RLM_EPHEMERAL).")
    boolean ephemeral;

    @Option(
            names = "--snapshot-debounce-ms",
            paramLabel = "MS",
            defaultValue = "${env:RLM_SNAPSHOT_DEBOUNCE_MS:-1000}",
            description = "Snapshot changed variables at the latest this long after the step that changed them, "
                    + "whatever later steps do, and before the session's next call runs (RLM_SNAPSHOT_DEBOUNCE_MS; "
                    + "default: ${DEFAULT-VALUE}).")
    long snapshotDebounceMs;

    @Option(
            names = "--durable-replies",
            defaultValue = "${env:RLM_DURABLE_REPLIES:-false}",
            description = "Send a step's reply only once the variables it changed are snapshotted (fsynced): "
                    + "nothing a reply reported is lost to a crash, at the cost of the write in every such step's "
                    + "latency (RLM_DURABLE_REPLIES).")
    boolean durableReplies;

    @Option(
            names = "--shutdown-timeout-s",
            paramLabel = "S",
            defaultValue = "${env:RLM_SHUTDOWN_TIMEOUT_S:-10}",
            description = "At shutdown, how long calls under way may take to finish, and then how long the "
                    + "sessions' last snapshots may take (RLM_SHUTDOWN_TIMEOUT_S; default: ${DEFAULT-VALUE}).")
    long shutdownTimeoutS;

    Duration shutdownTimeout(CommandSpec spec) {
        require(spec, shutdownTimeoutS >= 0, "--shutdown-timeout-s must not be negative");
        return Duration.ofSeconds(shutdownTimeoutS);
    }

    @Option(
            names = "--snapshot-s3",
            paramLabel = "URI",
            defaultValue = "${env:RLM_SNAPSHOT_S3}",
            description = "Also keep snapshots, session records and traces in S3 at s3://bucket[/prefix], so that "
                    + "another node resumes a session by its id; uses the data tools' S3 settings (MINIO_* or AWS_*); "
                    + "the bucket is created if missing (RLM_SNAPSHOT_S3; default: local only).")
    String snapshotS3;

    /** Where --snapshot-s3 keeps snapshots, which the data tools must not reach; null without it. */
    S3Store.Reserved snapshotArea() {
        if (snapshotS3 == null || snapshotS3.isBlank()) {
            return null;
        }
        try {
            S3SnapshotStore.Location location = S3SnapshotStore.Location.parse(snapshotS3);
            return new S3Store.Reserved(location.bucket(), location.prefix());
        } catch (IllegalArgumentException e) {
            return null; // store() refuses it with the reason
        }
    }

    /**
     * The state store --state-dir names, or the data root's own (created if missing, locked for this server;
     * null with --ephemeral), opened on a thread of its own so that start-up does not wait for SQLite. With
     * --snapshot-s3, a server without S3 configured does not start. With {@code cluster} (cluster mode),
     * records in its database and snapshots in S3, no SQLite.
     */
    CompletableFuture<StateStore> store(CommandSpec spec, DataOptions data, ClusterSessionDatabase cluster) {
        return store(spec, data, cluster, CompletableFuture.completedFuture(null));
    }

    /** As above, opened once {@code begin} completes (a stdio start: once the client has its tools). */
    CompletableFuture<StateStore> store(
            CommandSpec spec, DataOptions data, ClusterSessionDatabase cluster, CompletableFuture<?> begin) {
        require(spec, snapshotDebounceMs >= 0, "--snapshot-debounce-ms must not be negative");
        S3SnapshotStore.Location mirror = null;
        S3Store s3 = null;
        if (snapshotS3 != null && !snapshotS3.isBlank()) {
            require(spec, !ephemeral, "--snapshot-s3 keeps sessions in S3; it cannot be combined with --ephemeral");
            try {
                mirror = S3SnapshotStore.Location.parse(snapshotS3);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), "--snapshot-s3: " + e.getMessage());
            }
            s3 = data.snapshotS3();
            require(
                    spec,
                    s3.settings().configured(),
                    "--snapshot-s3 " + snapshotS3 + " needs S3, but "
                            + s3.settings().missing() + ": " + S3Settings.HOW);
        }
        require(
                spec,
                !(ephemeral && durableReplies),
                "--durable-replies snapshots to the state directory; it cannot " + "be combined with --ephemeral");
        if (ephemeral) {
            return CompletableFuture.completedFuture(null);
        }
        Path dir = (stateDir != null
                        ? StateDirectories.explicit(stateDir)
                        : StateDirectories.byDefault(StateDirectories.root(System.getenv()), dataRoot))
                .directory();
        return StateStoreOpener.open(
                dir,
                Duration.ofMillis(snapshotDebounceMs),
                durableReplies,
                s3,
                mirror,
                HostPolicy.fileSizeLimitBytes(maxMemoryMb * 1024 * 1024),
                cluster,
                begin);
    }

    /** The guardrails of a session whose creator sets none; {@link #settings} has checked the flags. */
    Limits defaultLimits() {
        return new Limits(maxSteps, maxRuntimeMs, budgetLimit, null);
    }

    Settings settings(CommandSpec spec) {
        require(spec, maxMemoryMb >= 0, "--max-memory-mb must be 0 (no limit) or more, not " + maxMemoryMb);
        require(spec, maxDiskMb == null || maxDiskMb >= 1, "--max-disk-mb must be at least 1, not " + maxDiskMb);
        require(
                spec,
                cleanupThreshold > 0 && cleanupThreshold <= 100,
                "--cleanup-threshold is a percentage in (0, 100], not " + cleanupThreshold);
        require(
                spec,
                cleanupTarget >= 0 && cleanupTarget < cleanupThreshold,
                "--cleanup-target must be below --cleanup-threshold (" + cleanupThreshold + "), not " + cleanupTarget);
        require(spec, outputCap >= 100, "--output-cap must be at least 100 characters, not " + outputCap);
        require(spec, timeoutS >= 1, "--timeout-s must be at least 1, not " + timeoutS);
        require(
                spec,
                maxTimeoutS >= timeoutS,
                "--max-timeout-s (" + maxTimeoutS + ") must be at least --timeout-s (" + timeoutS + ")");
        require(spec, interruptGraceMs >= 0, "--interrupt-grace-ms must not be negative");
        require(spec, idleTimeoutS >= 1, "--idle-timeout-s must be at least 1, not " + idleTimeoutS);
        require(spec, maxSteps == null || maxSteps >= 1, "--max-steps must be at least 1");
        require(spec, maxRuntimeMs == null || maxRuntimeMs >= 1, "--max-runtime-ms must be at least 1");
        require(spec, budgetLimit == null || budgetLimit >= 1, "--budget-limit must be at least 1");
        Path root = dataRoot.toAbsolutePath().normalize();
        require(spec, Files.isDirectory(root), "--data-root " + root + " is not a directory");
        return new Settings(
                python,
                root,
                RuntimeDirectory.createPrivate(spec, runtimeDir),
                maxMemoryMb * 1024 * 1024,
                cleanupThreshold / 100,
                cleanupTarget / 100,
                outputCap,
                Duration.ofSeconds(timeoutS),
                Duration.ofSeconds(maxTimeoutS),
                Duration.ofMillis(interruptGraceMs),
                Duration.ofSeconds(30),
                Duration.ofSeconds(idleTimeoutS),
                new ImportPolicy(names(allowedImports), names(blockedImports)),
                capacity(spec),
                diskLimitMb() * 1024 * 1024,
                durableReplies);
    }

    private Capacity capacity(CommandSpec spec) {
        require(spec, maxKernels >= 0, "--max-kernels must be 0 (from the machine) or more, not " + maxKernels);
        require(spec, warmKernels >= 0, "--warm-kernels must be 0 (none) or more, not " + warmKernels);
        require(
                spec,
                maxTotalMemoryMb >= 0,
                "--max-total-memory-mb must be 0 (from the machine) or more, not " + maxTotalMemoryMb);
        java.util.regex.Matcher range = java.util.regex.Pattern.compile("\\s*(\\d{1,10})\\s*-\\s*(\\d{1,10})\\s*")
                .matcher(kernelUids == null ? "" : kernelUids);
        require(
                spec,
                range.matches(),
                "--kernel-uids must be a range FROM-TO, such as " + Capacity.DEFAULT_FIRST_KERNEL_UID + "-"
                        + (Capacity.DEFAULT_FIRST_KERNEL_UID + 999) + ", not " + kernelUids);
        long from = Long.parseLong(range.group(1));
        long to = Long.parseLong(range.group(2));
        require(
                spec,
                from > 0 && from <= to && to <= Integer.MAX_VALUE && (from > 65534 || to < 65534),
                "--kernel-uids " + kernelUids + ": FROM must be at least 1 and at most TO, TO at most "
                        + Integer.MAX_VALUE + ", and the range must leave out 65534");
        return new Capacity(maxKernels, maxTotalMemoryMb * 1024 * 1024, warmKernels, (int) from, (int) (to - from + 1));
    }

    /**
     * --max-disk-mb, or by default room for a snapshot of a full session twice over (a changed
     * variable's new file is written before its old one goes), and never less than 2 GiB.
     */
    long diskLimitMb() {
        return maxDiskMb != null ? maxDiskMb : Math.max(2048, 2 * maxMemoryMb);
    }

    /**
     * How this host runs kernels: the launcher --sandbox asks for (one that is not available here
     * stops the start), and the cgroups, uids and rlimits the machine allows it; the kernel factory
     * logs it once.
     */
    HostPolicy hostPolicy(CommandSpec spec, Settings settings) {
        KernelLauncher launcher;
        try {
            launcher = Sandbox.select(
                    sandbox,
                    settings.runtimeDir(),
                    settings.diskLimitBytes(),
                    SnapshotPrune::prune,
                    () -> ContainerKernels.launcher(sandbox, containerImage, containerRuntime, maxMemoryMb));
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        return HostPolicy.decide(settings, launcher, sandbox);
    }

    /** A comma-separated module list; "none" or blank is the empty list. */
    static List<String> names(String list) {
        if (list == null || list.isBlank() || list.strip().equalsIgnoreCase("none")) {
            return List.of();
        }
        return Arrays.stream(list.split(","))
                .map(String::strip)
                .filter(name -> !name.isEmpty())
                .toList();
    }

    static void require(CommandSpec spec, boolean condition, String message) {
        if (!condition) {
            throw new ParameterException(spec.commandLine(), message);
        }
    }
}

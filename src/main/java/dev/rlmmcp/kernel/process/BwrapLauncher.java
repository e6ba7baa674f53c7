package dev.rlmmcp.kernel.process;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A kernel inside bubblewrap: new pid, net, ipc and uts namespaces (no network at all), uid/gid 65534
 * with no capabilities, a read-only filesystem of only /usr, the Python installation, the harness (its directory)
 * and the data root (at its host path, which rlm_load_file passes on; see {@link ReadOnlyBinds} for
 * how their parents are made), a size-capped tmpfs /tmp
 * a spool at /run/rlm-mcp/spool ($RLM_SPOOL), a tmpfs of the disk limit's size (the kernel bounds it,
 * charges it to the kernel's memory cgroup, and frees it when the sandbox's last process ends, however
 * the server ended), and its session's own snapshot directory, writable, at /run/rlm-mcp/snapshot,
 * kept to the disk limit by a {@link DirQuota}. A seccomp filter ({@link SyscallFilter}) refuses new
 * user namespaces, unix-socket connections and io_uring.
 *
 * <p>Unprivileged, the user namespace maps 65534 inside to the server's uid outside. Run as root,
 * that mapping would make the kernel host root (files it can see are its own, and RLIMIT_NPROC does
 * not bind root), so bwrap then skips the user namespace and setpriv(1) drops the kernel to the real
 * uid 65534 with every capability gone and no_new_privs set. There, every kernel shares that uid, so
 * where no pids cgroup keeps kernels' processes apart, {@link #uidPerKernel} gives each kernel a uid
 * (and gid) of its own from a range instead, for RLIMIT_NPROC to count its processes alone.
 * Unprivileged, each kernel has a user namespace of its own, in which (Linux 5.14 on) RLIMIT_NPROC
 * counts its processes alone already; all of them together also count against the server's uid.
 */
public final class BwrapLauncher implements KernelLauncher {

    public static final int NOBODY = 65534;
    static final long DEFAULT_TMP_BYTES = 256L * 1024 * 1024;
    private static final List<String> SYSTEM_DIRS = List.of("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32");
    private static final List<String> SYSTEM_FILES = List.of("/etc/ld.so.cache", "/etc/localtime");
    private static final Path SETPRIV = Path.of("/usr/bin/setpriv");
    /** Fixed paths inside the sandbox: the host's may lie below directories uid 65534 cannot enter. */
    /** The harness directory ({@link Harness#install}), run as {@code python -I -B /run/rlm-mcp/harness}. */
    private static final Path HARNESS = Path.of("/run/rlm-mcp/harness");

    private static final Path SPOOL = Path.of("/run/rlm-mcp/spool");
    /** Not the host path: a directory above it (the state directory is 0700) may be bound read-only too. */
    private static final Path SNAPSHOT = Path.of("/run/rlm-mcp/snapshot");

    private static final Path SHELL = Path.of("/bin/sh");

    private final Path bwrap;
    private final boolean privileged;
    private final long tmpBytes;
    private final long diskBytes;
    /** The seccomp filter bwrap reads on fd 3, or null where none is known for this machine. */
    private final Path filter;
    /** The disk limit on snapshot directories, and the notes of those whose kernel was killed over it. */
    private final SnapshotQuota quota;

    private volatile KernelUids uids;

    BwrapLauncher(
            Path bwrap,
            boolean privileged,
            long tmpBytes,
            long diskBytes,
            Path filter,
            Path overLimit,
            SnapshotCutBack snapshotCutBack) {
        this.bwrap = bwrap;
        this.privileged = privileged;
        this.tmpBytes = tmpBytes;
        this.diskBytes = diskBytes;
        this.filter = filter;
        this.quota = new SnapshotQuota(diskBytes, overLimit, snapshotCutBack);
    }

    /**
     * A launcher if bubblewrap is installed and can make a sandbox here (probed once with {@code true}),
     * its seccomp filter written to the (private) runtime directory. Removes the spool directories that
     * earlier versions left on disk there and no running sandbox uses.
     */
    public static Optional<BwrapLauncher> detect(Path runtimeDir, long diskBytes, SnapshotCutBack snapshotCutBack) {
        Optional<Path> bwrap = Stream.of("/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap")
                .map(Path::of)
                .filter(Files::isExecutable)
                .findFirst();
        if (bwrap.isEmpty()) {
            return Optional.empty();
        }
        StaleSpools.remove(runtimeDir.resolve("spool"));
        Path filter;
        try {
            filter = writeFilter(runtimeDir);
        } catch (IOException e) {
            return Optional.empty();
        }
        boolean root = runningAsRoot() && Files.isExecutable(SETPRIV);
        Path notes = runtimeDir.resolve("over-disk-limit");
        BwrapLauncher launcher =
                new BwrapLauncher(bwrap.get(), root, DEFAULT_TMP_BYTES, diskBytes, filter, notes, snapshotCutBack);
        if (launcher.works()) {
            return Optional.of(launcher);
        }
        // a kernel without seccomp filters: still bwrap rather than a weaker launcher, said once
        BwrapLauncher unfiltered =
                new BwrapLauncher(bwrap.get(), root, DEFAULT_TMP_BYTES, diskBytes, null, notes, snapshotCutBack);
        if (filter != null && unfiltered.works()) {
            org.slf4j.LoggerFactory.getLogger(BwrapLauncher.class)
                    .warn("bwrap cannot load a seccomp filter here: kernels may create user namespaces");
            return Optional.of(unfiltered);
        }
        return Optional.empty();
    }

    /** Writes the filter for this machine (atomically: servers may share the runtime directory); null if none. */
    private static Path writeFilter(Path runtimeDir) throws IOException {
        Optional<byte[]> program = SyscallFilter.forThisMachine();
        if (program.isEmpty()) {
            return null;
        }
        Files.createDirectories(runtimeDir);
        // named for its content: servers of other versions may share the runtime directory
        Path file = runtimeDir.resolve("syscall-filter-%08x.bpf".formatted(java.util.Arrays.hashCode(program.get())));
        Path tmp = Files.createTempFile(runtimeDir, ".syscall-filter", ".tmp");
        try {
            Files.write(tmp, program.get());
            Files.move(
                    tmp,
                    file,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmp);
        }
        return file;
    }

    @Override
    public String name() {
        return "bwrap";
    }

    @Override
    public Path writableDirInside(Path hostDir) {
        return SNAPSHOT;
    }

    /** True if bwrap runs as root, without a user namespace, and setpriv drops the kernel's uid. */
    public boolean privileged() {
        return privileged;
    }

    /** From now on, as root, each kernel runs as a uid (and gid) of its own from {@code range}, not 65534. */
    public void uidPerKernel(KernelUids range) {
        if (privileged) {
            uids = range;
        }
    }

    /** Unprivileged: a user namespace per kernel; as root: only with a uid per kernel. */
    @Override
    public boolean isolatesUser() {
        return !privileged || uids != null;
    }

    @Override
    public KernelHandle start(KernelSpec spec) throws IOException {
        KernelUids range = uids;
        int uid = range == null ? NOBODY : range.take();
        if (uid < 0) {
            throw new IOException(
                    "all " + range.count() + " kernel uids from " + range.first() + " are in use (--kernel-uids)");
        }
        try {
            return start(spec, uid, range);
        } catch (IOException | RuntimeException e) {
            if (range != null) {
                range.give(uid);
            }
            throw e;
        }
    }

    private KernelHandle start(KernelSpec spec, int uid, KernelUids range) throws IOException {
        List<String> command = sandbox(spec.readOnlyDirs(), spec.workDir(), spec.harness(), true);
        if (spec.hides()) {
            command.addAll(
                    command.indexOf("--remount-ro"),
                    List.of("--tmpfs", spec.hiddenDir().toString()));
        }
        if (spec.writableDir() != null) {
            command.addAll(
                    command.indexOf("--remount-ro"),
                    List.of("--bind", spec.writableDir().toString(), SNAPSHOT.toString()));
        }
        command.add("--");
        command.addAll(dropTo(uid));
        command.addAll(new KernelSpec(spec.python(), HARNESS, spec.harnessArgs(), spec.workDir(), spec.readOnlyDirs())
                .pythonCommand());
        // --die-with-parent: bwrap and the kernel die with the server, however it ends
        Process process = withEmptyEnv(KernelLauncher.inOwnSession(command)).start();
        return new BwrapKernel(process, uid, range, privileged, quota);
    }

    /**
     * The bwrap arguments up to the command: namespaces, identity, filesystem, environment. /tmp comes
     * before the binds, which may lie below it (the harness and data root often do). The kernel starts
     * in {@code workDir} (the data root) when it can see it, else in /tmp.
     */
    List<String> sandbox(List<Path> readOnlyDirs, Path workDir, Path harness, boolean spool) {
        List<String> args = new ArrayList<>(bwrapWithFilter());
        args.addAll(namespaces());
        args.addAll(systemMounts());
        args.addAll(kernelMounts(readOnlyDirs, harness, spool));
        args.addAll(readOnlyRootAndEnvironment(readOnlyDirs, workDir));
        return args;
    }

    /** bwrap with a clear environment, and its seccomp filter on fd 3 if there is one. */
    private List<String> bwrapWithFilter() {
        List<String> args = new ArrayList<>();
        if (filter != null) {
            // ProcessBuilder passes only fds 0-2: the shell opens the filter as fd 3 and becomes bwrap
            args.addAll(List.of(SHELL.toString(), "-c", "exec \"$@\" 3<\"$0\"", filter.toString()));
        }
        args.addAll(List.of(bwrap.toString(), "--clearenv"));
        if (filter != null) {
            args.addAll(List.of("--seccomp", "3"));
        }
        return args;
    }

    /** The new namespaces and, unprivileged, the identity inside them; the sandbox's life and session. */
    private List<String> namespaces() {
        List<String> args = new ArrayList<>();
        if (privileged) {
            args.addAll(List.of(
                    "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"));
        } else {
            args.addAll(List.of("--unshare-all", "--uid", "" + NOBODY, "--gid", "" + NOBODY, "--cap-drop", "ALL"));
        }
        args.addAll(List.of("--die-with-parent", "--new-session", "--hostname", "rlm-kernel"));
        return args;
    }

    /** /proc, /dev, the size-capped /tmp, and the system's programs and libraries, read-only. */
    private List<String> systemMounts() {
        List<String> args = new ArrayList<>(List.of(
                "--proc",
                "/proc",
                "--dev",
                "/dev",
                "--perms",
                "1777",
                "--size",
                "" + tmpBytes,
                "--tmpfs",
                "/tmp",
                "--ro-bind",
                "/usr",
                "/usr"));
        for (String dir : SYSTEM_DIRS) {
            Path path = Path.of(dir);
            if (Files.isSymbolicLink(path)) {
                args.addAll(List.of("--symlink", readLink(path), dir));
            } else if (Files.isDirectory(path)) {
                args.addAll(List.of("--ro-bind", dir, dir));
            }
        }
        for (String file : SYSTEM_FILES) {
            args.addAll(List.of("--ro-bind-try", file, file));
        }
        return args;
    }

    /** The data directories and the harness, read-only, and the spool (with $RLM_SPOOL) if asked for. */
    private List<String> kernelMounts(List<Path> readOnlyDirs, Path harness, boolean spool) {
        List<String> args = new ArrayList<>(ReadOnlyBinds.args(
                readOnlyDirs.stream().filter(Files::isDirectory).toList(), SYSTEM_DIRS));
        args.addAll(List.of("--perms", "0755", "--dir", HARNESS.getParent().toString()));
        if (harness != null) {
            args.addAll(List.of("--ro-bind", harness.toString(), HARNESS.toString()));
        }
        if (spool) {
            args.addAll(List.of(
                    "--perms",
                    "1777",
                    "--size",
                    "" + diskBytes,
                    "--tmpfs",
                    SPOOL.toString(),
                    "--setenv",
                    "RLM_SPOOL",
                    SPOOL.toString()));
        }
        return args;
    }

    /**
     * The root remounted read-only ({@link #start} inserts its own mounts before it), the working
     * directory, and the environment.
     */
    private static List<String> readOnlyRootAndEnvironment(List<Path> readOnlyDirs, Path workDir) {
        boolean inside = workDir != null && readOnlyDirs.stream().anyMatch(workDir::startsWith);
        return List.of(
                "--remount-ro",
                "/",
                "--chdir",
                inside ? workDir.toString() : "/tmp",
                "--setenv",
                "PATH",
                "/usr/local/bin:/usr/bin:/bin",
                "--setenv",
                "LANG",
                "C.UTF-8",
                "--setenv",
                "LC_ALL",
                "C.UTF-8",
                "--setenv",
                "HOME",
                "/tmp");
    }

    /** What runs the command inside the sandbox: setpriv to {@code uid} when bwrap runs as root, nothing otherwise. */
    List<String> dropTo(int uid) {
        return privileged
                ? List.of(
                        SETPRIV.toString(),
                        "--reuid=" + uid,
                        "--regid=" + uid,
                        "--clear-groups",
                        "--inh-caps=-all",
                        "--bounding-set=-all",
                        "--no-new-privs")
                : List.of();
    }

    private boolean works() {
        List<String> command = sandbox(List.of(), null, null, false);
        command.add("--");
        command.addAll(dropTo(NOBODY));
        command.add("/usr/bin/true");
        try {
            Process probe = withEmptyEnv(command)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            if (!probe.waitFor(10, TimeUnit.SECONDS)) {
                probe.destroyForcibly();
                return false;
            }
            return probe.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static boolean runningAsRoot() {
        try {
            return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).intValue() == 0;
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    private static ProcessBuilder withEmptyEnv(List<String> command) {
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().clear();
        return builder;
    }

    private static String readLink(Path link) {
        try {
            return Files.readSymbolicLink(link).toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

package dev.rlmmcp.kernel.process;

import java.io.File;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs each kernel in a throw-away podman or docker container: no network, read-only root, no
 * capabilities, an unprivileged uid, bounded memory, CPU, processes and /tmp. The framed protocol
 * runs over the container's stdin and stdout, so the container is attached with {@code -i} (never
 * {@code -t}, which would mangle the bytes). Each container is named so it can be signalled and killed.
 */
public final class ContainerLauncher implements KernelLauncher {

    /** The image, the interpreter inside it, and the container's resource limits. */
    public record ContainerSettings(String image, String python, int memoryMb, double cpus, int pidsLimit, int tmpMb) {

        public static final String DEFAULT_IMAGE = "python:3.12-slim";

        public ContainerSettings {
            if (image == null || image.isBlank() || python == null || python.isBlank()) {
                throw new IllegalArgumentException("a container image and the python command inside it are required");
            }
            if (memoryMb <= 0 || cpus <= 0 || pidsLimit <= 0 || tmpMb <= 0) {
                throw new IllegalArgumentException("container limits must be positive");
            }
        }

        public static ContainerSettings defaults() {
            return new ContainerSettings(DEFAULT_IMAGE, "python3", 1024, 1.0, 64, 64);
        }
    }

    public static final String USER = "65532:65532";
    /** The session's snapshot directory inside the container (a directory above its host path may be mounted read-only). */
    static final String SNAPSHOT = "/run/rlm-mcp/snapshot";
    /** Where the harness directory ({@link Harness#install}) is mounted, under its own name, and run from. */
    static final String HARNESS_DIR = "/opt/rlm-mcp/";

    private static final Logger log = LoggerFactory.getLogger(ContainerLauncher.class);
    private static final long PROBE_TIMEOUT_MS = 2500;

    private final Path runtime;
    private final ContainerSettings settings;

    public ContainerLauncher(Path runtime, ContainerSettings settings) {
        this.runtime = runtime;
        this.settings = settings;
    }

    /**
     * A launcher for the first runtime that is on PATH and whose engine answers; all probes together
     * take at most 2.5 seconds.
     * {@code preference} is "auto" (podman, then docker), "podman", "docker" or a path to either binary.
     */
    public static Optional<ContainerLauncher> detect(String preference, ContainerSettings settings) {
        List<String> candidates = "auto".equals(preference) ? List.of("podman", "docker") : List.of(preference);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PROBE_TIMEOUT_MS);
        for (String candidate : candidates) {
            Optional<Path> binary = onPath(candidate);
            if (binary.isEmpty()) {
                log.debug("no {} on PATH", candidate);
            } else if (engineAnswers(binary.get(), deadline)) {
                return Optional.of(new ContainerLauncher(binary.get(), settings));
            } else {
                log.info("{} is installed but its engine does not answer; not using it", binary.get());
            }
        }
        return Optional.empty();
    }

    public Path runtime() {
        return runtime;
    }

    public ContainerSettings settings() {
        return settings;
    }

    /** Kernels run as their own unprivileged user (65532), so per-user limits bind them. */
    @Override
    public boolean isolatesUser() {
        return true;
    }

    @Override
    public String name() {
        return "container";
    }

    @Override
    public Path writableDirInside(Path hostDir) {
        return Path.of(SNAPSHOT);
    }

    @Override
    public KernelHandle start(KernelSpec spec) throws IOException {
        String name = "rlm-kernel-" + ProcessHandle.current().pid() + "-"
                + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
        // The CLI keeps the server's environment (DOCKER_HOST, XDG_RUNTIME_DIR...); the container gets none of it.
        if (spec.writableDir() != null) {
            writableByKernel(spec.writableDir());
        }
        return new Container(
                new ProcessBuilder(KernelLauncher.inOwnSession(command(spec, name))).start(), runtime, name);
    }

    /** The kernel's uid may not be ours: as root, give it the directory; otherwise open the directory to it. */
    private static void writableByKernel(Path dir) throws IOException {
        if ("root".equals(System.getProperty("user.name"))) {
            int uid = Integer.parseInt(USER.split(":")[0]);
            Files.setAttribute(dir, "unix:uid", uid);
            Files.setAttribute(dir, "unix:gid", uid);
        } else {
            Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
        }
    }

    /** The full {@code run} command line for one kernel; pure, so it can be checked flag by flag. */
    public List<String> command(KernelSpec spec, String name) {
        String containerHarness = HARNESS_DIR + spec.harness().getFileName();
        List<String> command = new ArrayList<>(confinement(name));
        if (isPodman()) {
            // podman copies the host's proxy variables into containers unless told not to.
            command.add("--http-proxy=false");
        }
        command.addAll(List.of("--env", "HOME=/tmp", "--env", "LANG=C.UTF-8", "--env", "LC_ALL=C.UTF-8"));
        command.addAll(mounts(spec, containerHarness));
        command.addAll(List.of(
                "--workdir",
                spec.workDir().toAbsolutePath().normalize().toString(),
                settings.image(),
                settings.python(),
                "-I",
                "-B",
                containerHarness));
        command.addAll(spec.harnessArgs());
        return command;
    }

    /** The {@code run} flags that name the container and confine it: no network, no privileges, resource limits. */
    private List<String> confinement(String name) {
        return List.of(
                runtime.toString(),
                "run",
                "--rm",
                "-i",
                "--name",
                name,
                "--network",
                "none",
                "--read-only",
                "--cap-drop",
                "ALL",
                "--security-opt",
                "no-new-privileges",
                "--user",
                USER,
                "--pids-limit",
                Integer.toString(settings.pidsLimit()),
                "--memory",
                settings.memoryMb() + "m",
                "--memory-swap",
                settings.memoryMb() + "m",
                "--cpus",
                BigDecimal.valueOf(settings.cpus()).stripTrailingZeros().toPlainString(),
                "--tmpfs",
                "/tmp:rw,noexec,nosuid,nodev,size=" + settings.tmpMb() + "m,mode=1777",
                // The engine would otherwise keep a copy of everything the kernel sends us in its logs.
                "--log-driver",
                "none");
    }

    /**
     * The volumes: the harness and the readable directories read-only, the hidden directory covered by an
     * empty tmpfs, and the snapshot directory writable.
     */
    private static List<String> mounts(KernelSpec spec, String containerHarness) {
        List<String> args = new ArrayList<>(List.of("-v", mount(spec.harness(), containerHarness)));
        for (Path dir : readableDirs(spec)) {
            args.addAll(List.of("-v", mount(dir, dir.toString())));
        }
        if (spec.hides()) {
            String hidden = mount(spec.hiddenDir(), spec.hiddenDir().toString()).split(":")[0];
            args.addAll(List.of("--tmpfs", hidden + ":ro,size=1m"));
        }
        if (spec.writableDir() != null) {
            String dir = mount(spec.writableDir(), SNAPSHOT);
            args.addAll(List.of("-v", dir.substring(0, dir.length() - ":ro".length()) + ":rw"));
        }
        return args;
    }

    private boolean isPodman() {
        return runtime.getFileName().toString().contains("podman");
    }

    private static ProcessBuilder quietly(Path binary, String... args) {
        List<String> command = new ArrayList<>();
        command.add(binary.toString());
        command.addAll(List.of(args));
        return new ProcessBuilder(command)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD);
    }

    /** The data directories and the working directory, minus those already inside another. */
    private static Set<Path> readableDirs(KernelSpec spec) {
        List<Path> all = Stream.concat(spec.readOnlyDirs().stream(), Stream.of(spec.workDir()))
                .map(p -> p.toAbsolutePath().normalize())
                .toList();
        Set<Path> dirs = new LinkedHashSet<>();
        for (Path dir : all) {
            if (all.stream().noneMatch(other -> !other.equals(dir) && dir.startsWith(other))) {
                dirs.add(dir);
            }
        }
        return dirs;
    }

    private static String mount(Path host, String target) {
        String source = host.toAbsolutePath().normalize().toString();
        if (source.contains(":") || target.contains(":")) {
            throw new IllegalArgumentException("cannot mount a path containing ':' into a container: " + source);
        }
        return source + ":" + target + ":ro";
    }

    private static Optional<Path> onPath(String candidate) {
        if (candidate.contains(File.separator)) {
            Path path = Path.of(candidate);
            return Files.isExecutable(path) ? Optional.of(path) : Optional.empty();
        }
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        return Stream.of(path.split(File.pathSeparator))
                .filter(dir -> !dir.isEmpty())
                .map(dir -> Path.of(dir, candidate))
                .filter(Files::isExecutable)
                .findFirst();
    }

    private static boolean engineAnswers(Path binary, long deadline) {
        String version =
                binary.getFileName().toString().contains("podman") ? "{{.Version.Version}}" : "{{.ServerVersion}}";
        Process probe = null;
        try {
            probe = quietly(binary, "info", "--format", version).start();
            if (probe.waitFor(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                return probe.exitValue() == 0;
            }
            log.info("{} info did not answer within {} ms", binary, PROBE_TIMEOUT_MS);
            return false;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            if (probe != null && probe.isAlive()) {
                probe.destroyForcibly();
            }
        }
    }

    /** A kernel in a named container: signalled through the engine, since the process we hold is the engine's client. */
    private static final class Container extends KernelHandle {

        private final Path runtime;
        private final String name;

        Container(Process process, Path runtime, String name) {
            super(process);
            this.runtime = runtime;
            this.name = name;
        }

        @Override
        public void interrupt() {
            if (!isAlive()) {
                super.interrupt();
                return;
            }
            try {
                quietly(runtime, "kill", "--signal", "INT", name).start();
            } catch (IOException e) {
                log.warn("cannot interrupt container {}: {}", name, e.toString());
            }
        }

        @Override
        public void kill() {
            if (isAlive()) {
                try {
                    Process kill = quietly(runtime, "kill", name).start();
                    if (!kill.waitFor(3, TimeUnit.SECONDS)) {
                        kill.destroyForcibly();
                    }
                } catch (IOException e) {
                    log.warn("cannot kill container {}: {}", name, e.toString());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            process().destroyForcibly();
        }
    }
}

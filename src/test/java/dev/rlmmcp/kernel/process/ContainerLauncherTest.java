package dev.rlmmcp.kernel.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.kernel.channel.Kernel;
import dev.rlmmcp.kernel.channel.KernelReply;
import dev.rlmmcp.kernel.process.ContainerLauncher.ContainerSettings;
import dev.rlmmcp.kernel.protocol.ExecResult;
import dev.rlmmcp.kernel.protocol.KernelRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ContainerLauncherTest {

    private static final ContainerSettings SETTINGS =
            new ContainerSettings("python:3.12-slim", "python3", 512, 1.5, 64, 32);
    private static final KernelSpec SPEC = new KernelSpec(
            Path.of("/usr/bin/python3"),
            Path.of("/srv/rt/harness-abc"),
            List.of("{\"output_cap\":10}"),
            Path.of("/data"),
            List.of(Path.of("/data")));

    @TempDir
    Path dir;

    @Test
    void buildsTheHardenedRunCommand() {
        List<String> command =
                new ContainerLauncher(Path.of("/usr/bin/docker"), SETTINGS).command(SPEC, "rlm-kernel-1-ab");

        assertThat(command)
                .containsExactly(
                        "/usr/bin/docker",
                        "run",
                        "--rm",
                        "-i",
                        "--name",
                        "rlm-kernel-1-ab",
                        "--network",
                        "none",
                        "--read-only",
                        "--cap-drop",
                        "ALL",
                        "--security-opt",
                        "no-new-privileges",
                        "--user",
                        "65532:65532",
                        "--pids-limit",
                        "64",
                        "--memory",
                        "512m",
                        "--memory-swap",
                        "512m",
                        "--cpus",
                        "1.5",
                        "--tmpfs",
                        "/tmp:rw,noexec,nosuid,nodev,size=32m,mode=1777",
                        "--log-driver",
                        "none",
                        "--env",
                        "HOME=/tmp",
                        "--env",
                        "LANG=C.UTF-8",
                        "--env",
                        "LC_ALL=C.UTF-8",
                        "-v",
                        "/srv/rt/harness-abc:/opt/rlm-mcp/harness-abc:ro",
                        "-v",
                        "/data:/data:ro",
                        "--workdir",
                        "/data",
                        "python:3.12-slim",
                        "python3",
                        "-I",
                        "-B",
                        "/opt/rlm-mcp/harness-abc",
                        "{\"output_cap\":10}");
    }

    @Test
    void passesNoHostEnvironmentNoTerminalAndOnlyReadOnlyMounts() {
        for (String runtime : List.of("/usr/bin/docker", "/usr/bin/podman")) {
            List<String> command = new ContainerLauncher(Path.of(runtime), SETTINGS).command(SPEC, "n");

            assertThat(command).doesNotContain("-t", "--tty", "-it", "--env-host", "--env-file", "--privileged");
            assertThat(valuesOf(command, "--env")).containsExactly("HOME=/tmp", "LANG=C.UTF-8", "LC_ALL=C.UTF-8");
            assertThat(valuesOf(command, "-e")).isEmpty();
            assertThat(valuesOf(command, "-v")).isNotEmpty().allMatch(v -> v.endsWith(":ro"));
            assertThat(valuesOf(command, "--user")).containsExactly(ContainerLauncher.USER);
        }
        assertThat(new ContainerLauncher(Path.of("/usr/bin/podman"), SETTINGS).command(SPEC, "n"))
                .contains("--http-proxy=false");
    }

    @Test
    void mountsTheWorkingDirectoryUnlessItIsInsideTheDataRoot() {
        ContainerLauncher launcher = new ContainerLauncher(Path.of("/usr/bin/docker"), SETTINGS);
        Path harness = Path.of("/rt/harness-abc");

        KernelSpec inside =
                new KernelSpec(harness, harness, List.of(), Path.of("/data/sub"), List.of(Path.of("/data")));
        KernelSpec outside = new KernelSpec(harness, harness, List.of(), Path.of("/work"), List.of(Path.of("/data")));

        assertThat(valuesOf(launcher.command(inside, "n"), "-v"))
                .containsExactly("/rt/harness-abc:/opt/rlm-mcp/harness-abc:ro", "/data:/data:ro");
        assertThat(valuesOf(launcher.command(outside, "n"), "-v"))
                .containsExactly("/rt/harness-abc:/opt/rlm-mcp/harness-abc:ro", "/data:/data:ro", "/work:/work:ro");
    }

    @Test
    void refusesPathsTheMountSyntaxCannotCarry() {
        KernelSpec spec =
                new KernelSpec(SPEC.python(), SPEC.harness(), List.of(), Path.of("/a:b"), List.of(Path.of("/a:b")));

        assertThatThrownBy(() -> new ContainerLauncher(Path.of("/usr/bin/docker"), SETTINGS).command(spec, "n"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void detectFindsNothingWithoutARuntime() {
        assertThat(ContainerLauncher.detect(dir.resolve("docker").toString(), SETTINGS))
                .isEmpty();
    }

    @Test
    void detectGivesUpOnAnEngineThatDoesNotAnswer() throws Exception {
        Path hanging = script("docker", "exec sleep 30");

        long started = System.nanoTime();
        Optional<ContainerLauncher> found = ContainerLauncher.detect(hanging.toString(), SETTINGS);

        assertThat(found).isEmpty();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(3));
    }

    @Test
    void detectAcceptsAnEngineThatAnswers() throws Exception {
        Path answering = script("podman", "exit 0");

        assertThat(ContainerLauncher.detect(answering.toString(), SETTINGS))
                .hasValueSatisfying(l -> assertThat(l.runtime()).isEqualTo(answering));
    }

    @Test
    void detectOnThisMachineIsQuick() {
        long started = System.nanoTime();
        ContainerLauncher.detect("auto", SETTINGS);

        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(3));
    }

    @Test
    void interruptAndKillSignalTheNamedContainer() throws Exception {
        Path log = dir.resolve("calls");
        Path runtime = script("docker", "echo \"$*\" >> " + log + "\n[ \"$1\" = run ] && exec sleep 30\nexit 0");
        ContainerLauncher launcher = new ContainerLauncher(runtime, SETTINGS);

        KernelHandle kernel = launcher.start(SPEC);
        Process process = kernel.process();
        String name = awaitLine(log, "run ").replaceAll(".* --name (\\S+) .*", "$1");
        kernel.interrupt();
        awaitLine(log, "kill --signal INT ");
        kernel.kill();

        assertThat(name).startsWith("rlm-kernel-" + ProcessHandle.current().pid() + "-");
        assertThat(Files.readAllLines(log)).contains("kill --signal INT " + name, "kill " + name);
        assertThat(process.waitFor(5, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void runsAKernelInARealContainer() throws Exception {
        Optional<ContainerLauncher> launcher = ContainerLauncher.detect("auto", ContainerSettings.defaults());
        assumeTrue(
                launcher.isPresent(),
                "no podman or docker engine answers here: the container kernel is not run for real");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path harness = Harness.install(dir.resolve("runtime"));
        KernelSpec spec = new KernelSpec(Path.of("python3"), harness, List.of("{}"), dir, List.of(dir));
        ObjectMapper json = new ObjectMapper();
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

        try (Kernel kernel = Kernel.start(launcher.get(), spec, json, timer, "test", Duration.ofMinutes(5))) {
            Duration limit = Duration.ofSeconds(30);
            Duration grace = Duration.ofSeconds(2);
            kernel.call(new KernelRequest.Exec("x = 1", null), limit, grace);
            KernelReply<ExecResult> reply = kernel.call(new KernelRequest.Exec("print(x + 1)", null), limit, grace);

            assertThat(reply.ok()).isTrue();
            assertThat(reply.body().stdout()).isEqualTo("2\n");
        } finally {
            timer.shutdownNow();
        }
    }

    private static List<String> valuesOf(List<String> command, String flag) {
        List<String> values = new ArrayList<>();
        for (int i = 0; i < command.size() - 1; i++) {
            if (command.get(i).equals(flag)) {
                values.add(command.get(i + 1));
            }
        }
        return values;
    }

    private Path script(String name, String body) throws Exception {
        Path script = dir.resolve(name);
        Files.writeString(script, "#!/bin/sh\n" + body + "\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        return script;
    }

    private static String awaitLine(Path log, String prefix) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < deadline) {
            if (Files.exists(log)) {
                Optional<String> line = Files.readAllLines(log).stream()
                        .filter(l -> l.startsWith(prefix))
                        .findFirst();
                if (line.isPresent()) {
                    return line.get();
                }
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no line starting with '" + prefix + "' in " + log);
    }
}

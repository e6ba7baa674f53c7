package dev.rlmmcp.kernel.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.StepRequest;
import dev.rlmmcp.core.TestReplies;
import dev.rlmmcp.core.TestSettings;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.store.SnapshotPrune;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Real cgroups: runs only where this process may create them (root, or a delegated v2 subtree). */
class CgroupLimitsTest {

    private static final long SESSION_LIMIT = 64L * 1024 * 1024;
    private static final long CGROUP_LIMIT = 2 * SESSION_LIMIT + (1L << 30) + 512L * 1024 * 1024;

    @TempDir
    Path dir;

    private Sessions sessions;
    private CgroupLimits.Hierarchy hierarchy;

    @BeforeEach
    void requireCgroups() {
        assumeTrue(
                CgroupLimits.detect(1, 1).isPresent(),
                "no writable cgroup hierarchy with a memory controller here (not root, no delegation): skipped");
        hierarchy = CgroupLimits.find(Path.of("/proc/self/mountinfo"), Path.of("/proc/self/cgroup"))
                .orElseThrow();
    }

    @AfterEach
    void stop() {
        if (sessions != null) {
            sessions.close();
        }
    }

    private Session session(KernelLauncher launcher) {
        sessions = new Sessions(new KernelFactory(TestSettings.in(dir, SESSION_LIMIT), launcher, new ObjectMapper()));
        assertThat(sessions.kernels().cgroupLimits()).isTrue();
        return sessions.resolve(null, "cgroup-test");
    }

    @Test
    void kernelRunsInALimitedGroupThatGoesAwayWithIt() throws Exception {
        Session session = session(new ProcessLauncher());
        long pid = Long.parseLong(TestReplies.step(
                        session.execute(StepRequest.of("import os\nprint(os.getpid())", Duration.ofSeconds(30))))
                .path("stdout")
                .asText()
                .trim());
        String group = "rlm-kernel-" + pid;
        assertThat(Files.readString(Path.of("/proc/" + pid + "/cgroup"))).contains("/" + group + "\n");
        List<Path> groups =
                hierarchy.parents().stream().map(p -> p.resolve(group)).toList();
        assertThat(limit(groups, hierarchy.v2() ? "memory.max" : "memory.limit_in_bytes"))
                .isEqualTo(Long.toString(CGROUP_LIMIT));
        assertThat(limit(groups, "pids.max")).isEqualTo("256");

        sessions.close();
        sessions = null;
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (groups.stream().anyMatch(Files::exists) && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(groups).noneMatch(Files::exists);
    }

    @Test
    void memoryBombIsStoppedAndTheServerStaysUp() {
        Session session = session(new ProcessLauncher());
        ObjectNode reply = TestReplies.step(session.execute(StepRequest.of("""
                hog = []
                try:
                    while True:
                        hog.append(bytearray(64 * 1024 * 1024))
                except MemoryError:
                    print('stopped at', len(hog) * 64, 'MiB')
                """, Duration.ofSeconds(60))));
        if (reply.path("status").asText().equals("crashed")) {
            assertThat(reply.path("kernel_exit").asText()).as(reply.toString()).contains("SIGKILL");
        } else {
            assertThat(reply.path("stdout").asText()).as(reply.toString()).startsWith("stopped at");
        }
        assertThat(ProcessHandle.current().isAlive()).isTrue();
        assertThat(session.execute(StepRequest.of("print(6 * 7)", Duration.ofSeconds(30)))
                        .exec()
                        .stdout())
                .isEqualTo("42\n");
    }

    @Test
    void wholeBwrapSandboxIsInsideTheGroup() throws Exception {
        Optional<BwrapLauncher> bwrap =
                BwrapLauncher.detect(dir.resolve("spool"), Settings.DEFAULT_DISK_BYTES, SnapshotPrune::prune);
        assumeTrue(bwrap.isPresent(), "bubblewrap is not usable here: skipped");
        Session session = session(bwrap.get());
        assertThat(session.execute(StepRequest.of("print(1)", Duration.ofSeconds(30)))
                        .exec()
                        .stdout())
                .isEqualTo("1\n");
        ProcessHandle sandbox = ProcessHandle.current()
                .children()
                .filter(h -> h.info().command().orElse("").endsWith("bwrap"))
                .findFirst()
                .orElseThrow();
        String group = "/rlm-kernel-" + sandbox.pid() + "\n";
        List<ProcessHandle> members =
                new java.util.ArrayList<>(sandbox.descendants().toList());
        members.add(sandbox);
        assertThat(members).hasSizeGreaterThanOrEqualTo(3);
        for (ProcessHandle member : members) {
            assertThat(Files.readString(Path.of("/proc/" + member.pid() + "/cgroup")))
                    .as("pid " + member.pid())
                    .contains(group);
        }
    }

    private static String limit(List<Path> groups, String file) throws IOException {
        for (Path group : groups) {
            if (Files.exists(group.resolve(file))) {
                return Files.readString(group.resolve(file)).trim();
            }
        }
        throw new AssertionError(file + " in none of " + groups);
    }
}

package dev.rlmmcp.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rlmmcp.core.TestSettings;
import dev.rlmmcp.kernel.process.ContainerLauncher;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HostPolicyTest {

    @TempDir
    Path dir;

    @Test
    void aPlainProcessSharesTheServersUserAndIsDescribedInOneLine() {
        HostPolicy policy = HostPolicy.decide(TestSettings.in(dir), new ProcessLauncher(), "process");

        assertThat(policy.uids()).isNull();
        assertThat(policy.containerKernels()).isFalse();
        assertThat(policy.rlimits()).doesNotContainKey("nproc").containsKeys("nofile", "fsize", "cpu_per_request_s");
        assertThat(policy.toString())
                .doesNotContain("\n")
                .startsWith("sandbox process (asked for: process);")
                .contains("processes per kernel: ");
    }

    @Test
    void containersHaveTheEnginesLimitsAndAnRlimitOnTheirOwnUidsProcesses() {
        ContainerLauncher containers =
                new ContainerLauncher(Path.of("/nonexistent/docker"), ContainerLauncher.ContainerSettings.defaults());

        HostPolicy policy = HostPolicy.decide(TestSettings.in(dir), containers, "container");

        assertThat(policy.cgroups()).isNull();
        assertThat(policy.containerKernels()).isTrue();
        assertThat(policy.uidCap()).isEqualTo(Integer.MAX_VALUE);
        assertThat(policy.rlimits()).containsEntry("nproc", HostPolicy.KERNEL_PIDS);
        assertThat(policy.toString())
                .contains("cgroup per kernel: the container engine's")
                .contains("RLIMIT_NPROC " + HostPolicy.KERNEL_PIDS + " in a user namespace each");
    }
}

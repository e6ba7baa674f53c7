package dev.rlmmcp.kernel.process;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rlmmcp.store.SnapshotPrune;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The bwrap command line, built without running bwrap. */
class BwrapLauncherTest {

    @TempDir
    Path dir;

    private List<String> sandbox(boolean privileged, List<Path> readable, Path workDir) {
        BwrapLauncher launcher = new BwrapLauncher(
                Path.of("/usr/bin/bwrap"), privileged, 1 << 20, 1 << 20, null, null, SnapshotPrune::prune);
        return launcher.sandbox(readable, workDir, dir.resolve("harness-abc"), true);
    }

    @Test
    void aDeepDataRootGetsItsParentsMadeAfterTmpAndBeforeItsBind() throws Exception {
        Path data = Files.createDirectories(dir.resolve("a/b/c/data"));
        List<String> args = sandbox(true, List.of(data), data);
        int tmp = args.indexOf("--tmpfs") + 1;
        int bind = args.indexOf(data.toString());
        assertThat(args.get(bind - 1)).isEqualTo("--ro-bind");
        for (Path parent = data.getParent(); parent.getNameCount() > 0; parent = parent.getParent()) {
            int made = args.subList(0, bind).lastIndexOf(parent.toString());
            assertThat(args.subList(made - 3, made)).containsExactly("--perms", "0755", "--dir");
            assertThat(made).isBetween(tmp, bind);
        }
    }

    @Test
    void theParentsAreMadeUnprivilegedToo() throws Exception {
        Path data = Files.createDirectories(dir.resolve("home/u/projects/data"));
        List<String> args = sandbox(false, List.of(data), data);
        assertThat(args)
                .containsSubsequence(
                        "--perms",
                        "0755",
                        "--dir",
                        dir.resolve("home/u/projects").toString(),
                        "--ro-bind",
                        data.toString(),
                        data.toString());
    }

    @Test
    void missingDirsAreNotBound() {
        List<String> args = sandbox(true, List.of(dir.resolve("gone")), null);
        assertThat(args).doesNotContain(dir.resolve("gone").toString());
    }

    @Test
    void theKernelStartsInTheDataRootWhenItSeesIt() throws Exception {
        Path data = Files.createDirectories(dir.resolve("data"));
        assertThat(sandbox(true, List.of(data), data)).containsSubsequence("--chdir", data.toString());
        assertThat(sandbox(true, List.of(), data)).containsSubsequence("--chdir", "/tmp");
    }

    @Test
    void theSpoolIsATmpfsOfTheDiskLimitAndTheFilterComesOnFd3() {
        Path filter = dir.resolve("syscall-filter-0.bpf");
        List<String> args = new BwrapLauncher(
                        Path.of("/usr/bin/bwrap"), true, 1 << 20, 5L << 30, filter, null, SnapshotPrune::prune)
                .sandbox(List.of(), null, dir.resolve("harness-abc"), true);
        assertThat(args.subList(0, 5))
                .containsExactly("/bin/sh", "-c", "exec \"$@\" 3<\"$0\"", filter.toString(), "/usr/bin/bwrap");
        assertThat(args)
                .containsSubsequence("--seccomp", "3")
                .containsSubsequence(
                        "--perms",
                        "1777",
                        "--size",
                        "" + (5L << 30),
                        "--tmpfs",
                        "/run/rlm-mcp/spool",
                        "--setenv",
                        "RLM_SPOOL",
                        "/run/rlm-mcp/spool")
                .doesNotContain("--bind");
    }

    @Test
    void theHarnessDirectoryIsBoundReadOnlyAtAFixedPath() {
        assertThat(sandbox(true, List.of(), null))
                .containsSubsequence(
                        "--perms",
                        "0755",
                        "--dir",
                        "/run/rlm-mcp",
                        "--ro-bind",
                        dir.resolve("harness-abc").toString(),
                        "/run/rlm-mcp/harness");
    }
}

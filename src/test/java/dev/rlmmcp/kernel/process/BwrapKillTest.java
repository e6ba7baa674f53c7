package dev.rlmmcp.kernel.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.store.SnapshotPrune;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sandbox killed at any moment of its start leaves no process behind: bwrap's namespace child waits
 * for bwrap during its setup with no parent-death signal set yet, so killing bwrap alone then left that
 * child waiting for good, a child of pid 1 (real bwrap kernels, killed 0 to 20 ms after their start).
 */
class BwrapKillTest {

    @TempDir
    Path dir;

    @Test
    void aSandboxKilledAsItStartsLeavesNoProcessBehind() throws Exception {
        Optional<BwrapLauncher> found =
                BwrapLauncher.detect(dir.resolve("run"), Settings.DEFAULT_DISK_BYTES, SnapshotPrune::prune);
        assumeTrue(found.isPresent(), "bubblewrap is not usable here: skipped");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "no /usr/bin/python3");
        BwrapLauncher launcher = found.get();
        Path harness = Files.createDirectories(dir.resolve("harness"));
        Files.writeString(harness.resolve("__main__.py"), "import time\ntime.sleep(120)\n");
        List<Process> started = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            KernelHandle kernel =
                    launcher.start(new KernelSpec(Path.of("/usr/bin/python3"), harness, List.of(), dir, List.of()));
            started.add(kernel.process());
            if (i % 20 > 0) {
                TimeUnit.MICROSECONDS.sleep((i % 20) * 1000L);
            }
            kernel.kill();
        }
        for (Process kernel : started) {
            assertThat(kernel.waitFor(10, TimeUnit.SECONDS)).isTrue();
        }
        // the namespace children name this test's harness directory on their command lines; a killed
        // namespace takes a moment to be torn down
        List<String> left = left(harness);
        for (long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                !left.isEmpty() && System.nanoTime() < deadline;
                left = left(harness)) {
            Thread.sleep(100);
        }
        ProcessHandle.allProcesses()
                .filter(p -> p.info().commandLine().orElse("").contains(harness.toString()))
                .forEach(ProcessHandle::destroyForcibly);
        assertThat(left).as("processes left by killed sandboxes").isEmpty();
    }

    private static List<String> left(Path harness) {
        return ProcessHandle.allProcesses()
                .filter(ProcessHandle::isAlive)
                .filter(p -> p.info().commandLine().orElse("").contains(harness.toString()))
                .filter(p -> !isZombie(p.pid()))
                .map(p -> p.pid() + " (parent "
                        + p.parent().map(ProcessHandle::pid).orElse(-1L) + "): "
                        + p.info().commandLine().orElse("?"))
                .toList();
    }

    private static boolean isZombie(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2) == 'Z';
        } catch (Exception e) {
            return true; // gone
        }
    }
}

package dev.rlmmcp.kernel.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.rlmmcp.base.FileTrees;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A snapshot directory whose kernel the launcher killed over the disk limit is cut back before the
 * next kernel runs there, once, by this server and by the next one (real bwrap kernels).
 */
class OverLimitNoteTest {

    private static final long LIMIT = 1 << 20;

    @TempDir
    Path dir;

    private final List<KernelHandle> kernels = new CopyOnWriteArrayList<>();
    private final List<Path> cutBack = new CopyOnWriteArrayList<>();

    /**
     * With the launcher's own kill: the last kernel ends right after its start, before bwrap's
     * namespace child may have armed its parent-death signal, which that kill is made for.
     */
    @AfterEach
    void endKernels() {
        kernels.forEach(KernelHandle::kill);
    }

    private BwrapLauncher launcher() {
        Optional<BwrapLauncher> found = BwrapLauncher.detect(dir.resolve("run"), LIMIT, (d, limit) -> {
            cutBack.add(d);
            Files.deleteIfExists(d.resolve("junk"));
            return DirQuota.usage(d, Long.MAX_VALUE);
        });
        assumeTrue(found.isPresent(), "bubblewrap is not usable here: skipped");
        return found.get();
    }

    private KernelHandle kernel(BwrapLauncher launcher, Path snapshots) throws Exception {
        Path harness = Files.createDirectories(dir.resolve("harness"));
        Files.writeString(harness.resolve("__main__.py"), "import time\ntime.sleep(120)\n");
        KernelHandle kernel = launcher.start(
                new KernelSpec(Path.of("/usr/bin/python3"), harness, List.of(), dir, List.of(), snapshots, null));
        kernels.add(kernel);
        return kernel;
    }

    @Test
    void theNoteOutlivesTheServerAndIsUsedOnce() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "no /usr/bin/python3");
        Path snapshots = Files.createDirectories(dir.resolve("state/snapshots/s-1"));
        BwrapLauncher first = launcher();
        KernelHandle flooding = kernel(first, snapshots);
        flooding.attach(snapshots);
        Files.write(snapshots.resolve("junk"), new byte[2 << 20]);
        assertThat(flooding.waitFor(Duration.ofSeconds(10)))
                .as("killed over the limit")
                .isTrue();
        assertThat(flooding.whyEnded()).contains("disk limit");
        assertThat(cutBack).isEmpty();

        BwrapLauncher next = launcher(); // a server started after this one stopped
        kernel(next, snapshots).attach(snapshots);
        assertThat(cutBack).containsExactly(snapshots);
        assertThat(FileTrees.isEmpty(snapshots)).isTrue();

        Files.writeString(snapshots.resolve("kept"), "a snapshot file");
        kernel(next, snapshots).attach(snapshots);
        assertThat(cutBack).as("the note is used once").hasSize(1);
        assertThat(snapshots.resolve("kept")).exists();
    }
}

package dev.rlmmcp.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.kernel.process.BwrapLauncher;
import dev.rlmmcp.kernel.process.KernelUids;
import dev.rlmmcp.store.SnapshotPrune;
import dev.rlmmcp.store.StateStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * As root, where no pids cgroup keeps kernels apart, each kernel runs as a uid of its own from the
 * range, and a session's next kernel (another uid) reads and rewrites what the last one snapshotted.
 */
class KernelUidsSandboxTest {

    private static final int FIRST = 1_900_000_000;

    @TempDir
    Path dir;

    private Sessions sessions;

    @AfterEach
    void stop() {
        if (sessions != null) {
            sessions.close();
        }
    }

    @Test
    void eachKernelHasAUidOfItsOwnAndANewOneReadsTheLastOnesSnapshot() throws Exception {
        Optional<BwrapLauncher> found =
                BwrapLauncher.detect(dir.resolve("spool"), Settings.DEFAULT_DISK_BYTES, SnapshotPrune::prune);
        assumeTrue(found.isPresent() && found.get().privileged(), "needs bubblewrap run as root");
        KernelUids uids = new KernelUids(FIRST, 8);
        found.get().uidPerKernel(uids);
        assertThat(found.get().isolatesUser()).isTrue();
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        sessions = new Sessions(
                new KernelFactory(TestSettings.in(dir), found.get(), new ObjectMapper()),
                StateStore.open(dir.resolve("state"), Duration.ofHours(1)));
        Session one = sessions.create("one", Limits.NONE);
        Session two = sessions.create("two", Limits.NONE);
        int first = Integer.parseInt(
                out(one, "import os\nx = [1, 2]\nprint(os.getuid())").strip());
        int second = Integer.parseInt(out(two, "import os\nprint(os.getuid())").strip());
        assertThat(first).isBetween(FIRST, FIRST + 7);
        assertThat(second).isBetween(FIRST, FIRST + 7).isNotEqualTo(first);
        assertThat(out(one, "print(os.getgid() == os.getuid())")).isEqualTo("True\n");
        assertThat(uids.inUse()).isEqualTo(2);

        one.snapshotNow();
        assertThat(one.releaseIdle(true)).isTrue();
        awaitInUse(uids, 1);
        assertThat(out(one, "import os\nx.append(3)\nprint(x, os.getuid() != " + first + ")"))
                .isEqualTo("[1, 2, 3] True\n");
        assertThat(one.snapshotNow())
                .as("written before the reply: nothing left to write")
                .isNull();
        assertThat(one.releaseIdle(true)).isTrue();
        assertThat(out(one, "print(x)")).isEqualTo("[1, 2, 3]\n");
    }

    private static void awaitInUse(KernelUids uids, int count) throws InterruptedException {
        for (int i = 0; i < 100 && uids.inUse() != count; i++) {
            Thread.sleep(20);
        }
        assertThat(uids.inUse()).isEqualTo(count);
    }

    private static String out(Session session, String code) {
        ObjectNode reply = TestReplies.step(session.execute(StepRequest.of(code, Duration.ofSeconds(30))));
        assertThat(reply.path("status").asText()).as(reply.toString()).isEqualTo("ok");
        return reply.path("stdout").asText();
    }
}

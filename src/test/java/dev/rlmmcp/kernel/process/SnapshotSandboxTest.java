package dev.rlmmcp.kernel.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.Limits;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.StepRequest;
import dev.rlmmcp.core.TestReplies;
import dev.rlmmcp.core.TestSettings;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.Settings;
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
 * Under bwrap a kernel writes its own session's snapshot and nothing else: not another session's,
 * not the session database, even with the state directory inside the data root it may read.
 */
class SnapshotSandboxTest {

    @TempDir
    Path dir;

    private Sessions sessions;

    @AfterEach
    void stop() {
        if (sessions != null) {
            sessions.close();
        }
    }

    private static String out(Session session, String code) {
        ObjectNode reply = TestReplies.step(session.execute(StepRequest.of(code, Duration.ofSeconds(30))));
        assertThat(reply.path("status").asText()).as(reply.toString()).isEqualTo("ok");
        return reply.path("stdout").asText();
    }

    @Test
    void aKernelSeesOnlyItsOwnSnapshot() throws Exception {
        Optional<BwrapLauncher> launcher =
                BwrapLauncher.detect(dir.resolve("spool"), Settings.DEFAULT_DISK_BYTES, SnapshotPrune::prune);
        assumeTrue(launcher.isPresent(), "bubblewrap is not usable here");
        Path state = dir.resolve("state");
        sessions = new Sessions(
                new KernelFactory(TestSettings.in(dir), launcher.get(), new ObjectMapper()),
                StateStore.open(state, Duration.ofHours(1)));
        // readable by anyone on the host, so that only the sandbox's own hiding keeps the kernel out
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setPosixFilePermissions(state, PosixFilePermissions.fromString("rwxr-xr-x"));
        Session mine = sessions.create("mine", Limits.NONE);
        Session other = sessions.create("other", Limits.NONE);
        out(other, "secret = 'other session data'");
        other.snapshotNow();
        out(mine, "x = [1, 2]");
        assertThat(mine.snapshotNow())
                .as("written before the reply: nothing left to write")
                .isNull();

        assertThat(out(mine, "import os\nprint(sorted(os.listdir('/run/rlm-mcp/snapshot')))"))
                .contains("manifest.json")
                .contains("x.");
        for (Path secret : new Path[] {
            state.resolve("sessions.db"), state.resolve("snapshots").resolve(other.id())
        }) {
            assertThat(out(
                            mine,
                            "import os\ntry:\n    os.stat(" + py(secret.toString()) + ")\n    print('seen')\n"
                                    + "except OSError as e:\n    print('hidden')"))
                    .as(secret.toString())
                    .isEqualTo("hidden\n");
        }
        assertThat(out(
                        mine,
                        "try:\n    open(" + py(dir.resolve("planted").toString())
                                + ", 'w')\n    print('wrote')\nexcept OSError as e:\n    print('read-only')"))
                .isEqualTo("read-only\n");
    }

    private static String py(String s) {
        return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'";
    }
}

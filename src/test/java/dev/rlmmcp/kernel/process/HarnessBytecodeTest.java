package dev.rlmmcp.kernel.process;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.time.Duration;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A session's kernel, started by the factory (under bwrap where it runs, else as a plain process), runs
 * the harness compiled for the configured interpreter: every harness module it has imported has its
 * bytecode beside it.
 */
class HarnessBytecodeTest {

    private static final String CACHED = """
            import os, sys
            mods = sorted(n for n in sys.modules if n == 'rlm_harness' or n.startswith('rlm_harness.'))
            missing = [n for n in mods if not os.path.isfile(sys.modules[n].__spec__.cached)]
            print(len(mods), missing, os.path.dirname(sys.modules['rlm_harness'].__spec__.cached))
            """;

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
    void sessionKernelsRunTheHarnessCompiledForTheirInterpreter() throws Exception {
        Optional<BwrapLauncher> bwrap =
                BwrapLauncher.detect(dir.resolve("spool"), Settings.DEFAULT_DISK_BYTES, SnapshotPrune::prune);
        KernelLauncher launcher = bwrap.<KernelLauncher>map(l -> l).orElseGet(ProcessLauncher::new);
        Settings settings = TestSettings.in(dir);
        KernelFactory kernels = new KernelFactory(settings, launcher, new ObjectMapper());
        sessions = new Sessions(kernels, StateStore.open(dir.resolve("state"), Duration.ofHours(1)));
        Session session = sessions.create("pyc", Limits.NONE);

        ObjectNode reply = TestReplies.step(session.execute(StepRequest.of(CACHED, Duration.ofSeconds(30))));

        assertThat(reply.path("status").asText()).as(reply.toString()).isEqualTo("ok");
        String[] out = reply.path("stdout").asText().strip().split(" ", 3);
        assertThat(Integer.parseInt(out[0])).isGreaterThanOrEqualTo(5);
        assertThat(out[1]).isEqualTo("[]");
        assertThat(out[2]).endsWith("rlm_harness/__pycache__");
        String version = kernels.pythonIfKnown().version();
        try (Stream<Path> installed = Files.list(settings.runtimeDir())) {
            assertThat(installed.map(p -> p.getFileName().toString()))
                    .anyMatch(name ->
                            name.matches("harness-[0-9a-f]{12}-" + version.replace(".", "\\.") + "-[0-9a-f]{8}"));
        }
    }
}

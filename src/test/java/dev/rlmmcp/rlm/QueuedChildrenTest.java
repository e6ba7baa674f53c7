package dev.rlmmcp.rlm;

import static dev.rlmmcp.rlm.ScriptedBackend.repl;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.core.DataType;
import dev.rlmmcp.core.Limits;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.TestSettings;
import dev.rlmmcp.kernel.Capacity;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.kernel.process.BwrapLauncher;
import dev.rlmmcp.kernel.process.KernelLauncher;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.llm.LlmLimits;
import dev.rlmmcp.llm.LlmService;
import dev.rlmmcp.store.SnapshotPrune;
import dev.rlmmcp.store.StateStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * 64 child RLMs at once on a server whose --max-kernels is 8: the children wait in line for a kernel,
 * none fails. Real kernels in the default sandbox where there is one, the model a script.
 */
class QueuedChildrenTest {

    private static final ObjectMapper JSON = new ObjectMapper();

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
    void sixtyFourChildrenAtOnceWithMaxKernelsEightAllAnswer() {
        ScriptedBackend model = new ScriptedBackend(t -> {
            if (t.question().equals("sum")) {
                return t.index() == 1 ? repl("""
                        parts = rlm_query_batched(["double"] * 64, list(range(64)))
                        print(parts)
                        """) : repl("""
                        answer["content"] = sum(int(p) for p in parts)
                        answer["ready"] = True
                        """);
            }
            // each child holds its kernel past the few seconds a session's kernel would wait for a place
            Thread.sleep(1000);
            return repl("answer['content'] = context * 2\nanswer['ready'] = True");
        });
        LlmService llm = new LlmService(
                LlmService.Mode.OPENAI,
                model,
                new LlmLimits(1000, 100_000, 64, 1_000_000, null, Duration.ofSeconds(60), 3),
                JSON);
        Settings s = TestSettings.in(dir);
        Settings settings = new Settings(
                s.python(),
                s.dataRoot(),
                s.runtimeDir(),
                s.memoryLimitBytes(),
                s.cleanupThreshold(),
                s.cleanupTarget(),
                s.outputCap(),
                // the root's one step waits for all 64 children, 8 waves of at least a second: a loaded machine
                // (another JVM training its start-up cache) has made it several times that
                Duration.ofSeconds(120),
                s.maxTimeout(),
                s.interruptGrace(),
                s.kernelStartTimeout(),
                s.idleTimeout(),
                s.importPolicy(),
                new Capacity(8, 0, 2, Capacity.DEFAULT_FIRST_KERNEL_UID, Capacity.DEFAULT_KERNEL_UIDS),
                s.diskLimitBytes());
        KernelLauncher launcher = BwrapLauncher.detect(
                        dir.resolve("runtime"), Settings.DEFAULT_DISK_BYTES, SnapshotPrune::prune)
                .<KernelLauncher>map(l -> l)
                .orElseGet(ProcessLauncher::new);
        KernelFactory kernels = new KernelFactory(settings, launcher, JSON);
        StateStore store = StateStore.open(dir.resolve("state"), Duration.ofHours(1));
        sessions = new Sessions(kernels, llm, store);
        kernels.keepWarm(store.snapshots().root(), store.directory());
        RlmRuns runs = new RlmRuns(
                sessions,
                new RlmConfig(
                        new RunLimits(2, 30, 256, Duration.ofMinutes(5), null, null, null, 5, 20_000, 0.85, 64),
                        Map.of(),
                        Map.of(),
                        128_000));

        Session root = sessions.create("root", Limits.NONE);
        root.loadData("context", "0", DataType.TEXT, CallContext.NONE);
        RunOutcome outcome =
                runs.solve(root, "sum", new RunOptions(null, null), null, RunProgress.NONE, CallContext.NONE);

        assertThat(outcome.answer()).as(outcome.toString()).isEqualTo(String.valueOf(2 * (63 * 64 / 2)));
        assertThat(outcome.figures().children()).isEqualTo(64);
        assertThat(kernels.budget().waiting()).isZero();
    }
}

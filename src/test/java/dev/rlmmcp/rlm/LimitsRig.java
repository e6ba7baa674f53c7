package dev.rlmmcp.rlm;

import static dev.rlmmcp.rlm.ScriptedBackend.repl;

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
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.llm.LlmLimits;
import dev.rlmmcp.llm.LlmService;
import dev.rlmmcp.store.StateStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the tests of the limits a run's tree cannot slip share: real kernels under a --max-kernels of
 * their choice, the model a script, llm_query's limits at their defaults (100 calls a step, prompts
 * of at most 200,000 characters).
 */
abstract class LimitsRig {

    static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    Sessions sessions;
    RlmRuns runs;
    ScriptedBackend model;

    @AfterEach
    void stop() {
        if (sessions != null) {
            sessions.close();
        }
    }

    void start(ScriptedBackend.Policy policy, RlmConfig config, int maxKernels) {
        model = new ScriptedBackend(policy);
        LlmService llm = new LlmService(
                LlmService.Mode.OPENAI,
                model,
                new LlmLimits(100, 100_000, 16, 200_000, null, Duration.ofSeconds(30), 1),
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
                s.defaultTimeout(),
                s.maxTimeout(),
                s.interruptGrace(),
                s.kernelStartTimeout(),
                s.idleTimeout(),
                s.importPolicy(),
                new Capacity(maxKernels, 0, 0, Capacity.DEFAULT_FIRST_KERNEL_UID, Capacity.DEFAULT_KERNEL_UIDS),
                s.diskLimitBytes());
        KernelFactory kernels = new KernelFactory(settings, new ProcessLauncher(), JSON);
        sessions = new Sessions(kernels, llm, StateStore.open(dir.resolve("state"), Duration.ofHours(1)));
        runs = new RlmRuns(sessions, config);
    }

    static RunLimits limits(int depth, Duration time, Long maxInputTokens) {
        RunLimits d = RunLimits.DEFAULTS;
        return new RunLimits(
                depth,
                d.maxIterations(),
                d.maxChildren(),
                time,
                maxInputTokens,
                null,
                null,
                d.maxConsecutiveErrors(),
                d.outputCap(),
                d.compactAt(),
                d.concurrency());
    }

    RunOutcome solve(String question) {
        Session root = sessions.create("root", Limits.NONE);
        root.loadData("context", "x", DataType.TEXT, CallContext.NONE);
        return runs.solve(root, question, new RunOptions(null, null), null, RunProgress.NONE, CallContext.NONE);
    }

    /** The root's one turn: runs {@code code}, which leaves its lines in {@code out}, and answers with them. */
    static String answering(String code) {
        return repl("out = []\n" + code.strip() + "\nanswer['content'] = '\\n'.join(out)\nanswer['ready'] = True");
    }

    static String sleep(long ms, String reply) throws InterruptedException {
        Thread.sleep(ms);
        return reply;
    }

    /** What {@code call} returns, failing the test if it takes longer than {@code limit}. */
    static <T> T within(Duration limit, Callable<T> call) throws Exception {
        CompletableFuture<T> f = CompletableFuture.supplyAsync(() -> {
            try {
                return call.call();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            return f.get(limit.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError("no outcome within " + limit.toSeconds() + " s", e);
        }
    }
}

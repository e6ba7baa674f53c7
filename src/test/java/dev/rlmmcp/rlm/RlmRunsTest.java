package dev.rlmmcp.rlm;

import static dev.rlmmcp.rlm.ScriptedBackend.repl;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.core.Limits;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.StepRequest;
import dev.rlmmcp.core.TestSettings;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.llm.LlmLimits;
import dev.rlmmcp.llm.LlmService;
import dev.rlmmcp.store.StateStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The RLM loop, children and budgets over real kernels, the model a script. */
class RlmRunsTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private Sessions sessions;
    private RlmRuns runs;
    private ScriptedBackend model;
    private int started;

    private void start(ScriptedBackend.Policy policy, RlmConfig config) {
        model = new ScriptedBackend(policy);
        LlmService llm = new LlmService(
                LlmService.Mode.OPENAI,
                model,
                new LlmLimits(1000, 100_000, 16, 1_000_000, null, Duration.ofSeconds(30), 1),
                JSON);
        Path home = dir.resolve("run" + (++started));
        KernelFactory kernels = new KernelFactory(TestSettings.in(home), new ProcessLauncher(), JSON);
        sessions = new Sessions(kernels, llm, StateStore.open(home.resolve("state"), Duration.ofHours(1)));
        runs = new RlmRuns(sessions, config);
    }

    private static RlmConfig limits(RunLimits limits) {
        return new RlmConfig(limits, Map.of(), Map.of(), 128_000);
    }

    private static RunLimits depth(int maxDepth) {
        RunLimits d = RunLimits.DEFAULTS;
        return new RunLimits(
                maxDepth,
                d.maxIterations(),
                d.maxChildren(),
                d.maxTime(),
                null,
                null,
                null,
                d.maxConsecutiveErrors(),
                d.outputCap(),
                d.compactAt(),
                d.concurrency());
    }

    @AfterEach
    void stop() {
        if (sessions != null) {
            sessions.close();
        }
    }

    private Session withContext(String value) {
        Session s = sessions.create("root", Limits.NONE);
        s.loadData("context", value, dev.rlmmcp.core.DataType.TEXT, CallContext.NONE);
        return s;
    }

    private RunOutcome solve(Session s, String question) {
        return runs.solve(s, question, new RunOptions(null, null), null, RunProgress.NONE, CallContext.NONE);
    }

    /** Needle search: the root splits the context for children, children split again, leaves search. */
    private static String needles(ScriptedBackend.Turn t) {
        if (!t.rlm()) {
            return "plain";
        }
        if (t.question().startsWith("split")) {
            return t.index() == 1 ? repl("""
                    half = len(context) // 2
                    found = rlm_query_batched(["search"] * 2, [context[:half], context[half:]])
                    print(found)
                    """) : repl("""
                    hits = [f for f in found if f != "none"]
                    answer["content"] = hits[0] if hits else "none"
                    answer["ready"] = True
                    """);
        }
        return repl("""
                import re
                seen = llm_query("a leaf's own sub-call")
                m = re.search(r"magic number is (\\d+)", context)
                answer["content"] = m.group(1) if m else "none"
                answer["ready"] = True
                """);
    }

    @Test
    void aDepthTwoTreeFindsTheNeedleWithChildrenAndGrandchildren() throws Exception {
        start(
                t -> {
                    if (t.rlm() && t.question().startsWith("find")) {
                        return t.index() == 1 ? repl("""
                        q = len(context) // 2
                        found = rlm_query_batched(["split"] * 2, [context[:q], context[q:]])
                        print(found)
                        """) : repl("""
                        answer["content"] = [f for f in found if f != "none"][0]
                        answer["ready"] = True
                        """);
                    }
                    return needles(t);
                },
                limits(depth(3)));
        String hay = "lorem ipsum ".repeat(20_000);
        Session s = withContext(hay.substring(0, 200_000) + " the magic number is 4242 " + hay.substring(200_000));
        RunOutcome outcome = solve(s, "find the magic number");
        assertThat(outcome.answer()).isEqualTo("4242");
        assertThat(outcome.ready()).isTrue();
        assertThat(outcome.stoppedBy()).isNull();
        assertThat(outcome.figures().children()).isEqualTo(6);
        // the leaves' own llm_query calls are at depth 3, past the session's own llm_max_depth of 1: the run decides
        assertThat(outcome.figures().depthReached()).isEqualTo(3);
        assertThat(outcome.figures().llmCalls() + outcome.figures().cacheHits()).isEqualTo(4);
        assertThat(outcome.figures().iterations()).isEqualTo(2 + 2 * 2 + 4);
        JsonNode entry = lastTrace(s);
        assertThat(entry.path("kind").asText()).isEqualTo("rlm");
        JsonNode root = entry.path("rlm").path("root");
        JsonNode children =
                root.path("iterations").path(0).path("code_blocks").path(0).path("sub_calls");
        assertThat(children).hasSize(2);
        assertThat(children.path(0).path("kind").asText()).isEqualTo("rlm");
        JsonNode grandchildren = children.path(0)
                .path("child")
                .path("iterations")
                .path(0)
                .path("code_blocks")
                .path(0)
                .path("sub_calls");
        assertThat(grandchildren).hasSize(2);
        assertThat(grandchildren.path(0).path("child").path("depth").asInt()).isEqualTo(2);
        // every child's kernel is gone, and so are the contexts handed over
        assertThat(sessions.kernels().sessionKernels()).isLessThanOrEqualTo(1);
        try (Stream<Path> left = Files.walk(dir)) {
            assertThat(left.filter(p -> p.toString().endsWith(".pkl")
                            || p.getFileName().toString().startsWith("child-")))
                    .isEmpty();
        }
    }

    @Test
    void atTheDepthLimitRlmQueryIsAPlainCall() throws Exception {
        start(
                t -> t.rlm()
                        ? (t.index() == 1
                                ? repl("""
                r = rlm_query("what is small", context="tiny")
                print(r)
                """)
                                : "FINAL("
                                        + t.last().lines().skip(1).findFirst().orElse("?") + ")")
                        : "plain answer",
                limits(depth(1)));
        RunOutcome outcome = solve(withContext("x"), "ask");
        assertThat(outcome.answer()).isEqualTo("plain answer");
        assertThat(outcome.figures().children()).isZero();
        assertThat(outcome.figures().llmCalls()).isEqualTo(1);
        assertThat(model.seen.stream()
                        .filter(t -> !t.rlm())
                        .findFirst()
                        .orElseThrow()
                        .last())
                .startsWith("what is small")
                .endsWith("The context:\ntiny");
    }

    @Test
    void sixteenChildrenRunInParallel() throws Exception {
        RunLimits d = RunLimits.DEFAULTS;
        start(
                t -> {
                    if (t.question().equals("sum")) {
                        return t.index() == 1 ? repl("""
                        parts = rlm_query_batched(["double"] * 16, list(range(16)))
                        print(parts)
                        """) : repl("""
                        answer["content"] = sum(int(p) for p in parts)
                        answer["ready"] = True
                        """);
                    }
                    // long enough for all 16 children's kernels to start meanwhile on a busy 2-core machine
                    Thread.sleep(2500);
                    return repl("answer['content'] = context * 2\nanswer['ready'] = True");
                },
                limits(new RunLimits(2, 30, 256, Duration.ofMinutes(5), null, null, null, 5, 20_000, 0.85, 16)));
        long t0 = System.nanoTime();
        RunOutcome outcome = solve(withContext("0"), "sum");
        assertThat(outcome.answer()).isEqualTo(String.valueOf(2 * (15 * 16 / 2)));
        assertThat(outcome.figures().children()).isEqualTo(16);
        assertThat(model.peak.get()).isEqualTo(16);
        assertThat((System.nanoTime() - t0) / 1e9)
                .as("16 children of 2.5 s each, at once")
                .isLessThan(10.0);
    }

    @Test
    void aFailedChildIsAnErrorStringInItsPlaceAndRaisesAlone() throws Exception {
        start(
                t -> {
                    if (t.question().equals("root")) {
                        return t.index() == 1 ? repl("""
                        out = rlm_query_batched(["crash", "fine"], ["a", "b"])
                        try:
                            rlm_query("crash", "c")
                        except RLMQueryError as e:
                            out.append("raised " + e.code)
                        print(out)
                        """) : "FINAL(done)";
                    }
                    return t.question().equals("crash")
                            ? repl("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
                            : repl("answer['content'] = 'ok:' + context\nanswer['ready'] = True");
                },
                limits(RunLimits.DEFAULTS));
        Session s = withContext("x");
        RunOutcome outcome = solve(s, "root");
        assertThat(outcome.answer()).isEqualTo("done");
        JsonNode block = lastTrace(s)
                .path("rlm")
                .path("root")
                .path("iterations")
                .path(0)
                .path("code_blocks")
                .path(0);
        assertThat(block.path("stdout").asText()).contains("[rlm_query failed: ", "'ok:b'", "raised ");
        assertThat(s.listVars().body().variables()).extracting(v -> v.name()).contains("out");
    }

    @Test
    void aChildWhoseStepTimesOutGoesOnAndOneWhoseKernelIsKilledFails() throws Exception {
        start(
                t -> {
                    if (t.question().equals("root")) {
                        return t.index() == 1
                                ? repl("print(rlm_query_batched(['slow', 'stubborn'], ['a', 'b']))")
                                : "FINAL(done)";
                    }
                    if (t.question().equals("slow")) {
                        return t.index() == 1
                                ? repl("import time\ntime.sleep(30)")
                                : repl("answer['content'] = 'recovered ' + context\nanswer['ready'] = True");
                    }
                    return repl("""
                    import signal, time
                    signal.signal(signal.SIGINT, signal.SIG_IGN)
                    signal.signal(signal.SIGTERM, signal.SIG_IGN)
                    time.sleep(30)
                    """);
                },
                limits(RunLimits.DEFAULTS));
        Session s = sessions.create("root", new Limits(null, null, null, Duration.ofSeconds(1)));
        s.loadData("context", "x", dev.rlmmcp.core.DataType.TEXT, CallContext.NONE);
        long t0 = System.nanoTime();
        RunOutcome outcome = solve(s, "root");
        assertThat(outcome.answer()).isEqualTo("done");
        String printed = lastTrace(s)
                .path("rlm")
                .path("root")
                .path("iterations")
                .path(0)
                .path("code_blocks")
                .path(0)
                .path("stdout")
                .asText();
        assertThat(printed).contains("'recovered a'", "[rlm_query failed: ");
        assertThat(model.seen.stream()
                        .filter(t -> t.question().equals("slow") && t.index() == 2)
                        .findFirst()
                        .orElseThrow()
                        .last())
                .contains("interrupted");
        assertThat((System.nanoTime() - t0) / 1e9).isLessThan(20);
    }

    @Test
    void theRootMustRunCodeBeforeAnAnswerInTextCounts() throws Exception {
        start(
                t -> switch (t.index()) {
                    case 1 -> "The answer is clearly this.\nFINAL(41)";
                    case 2 -> repl("print(6 * 7)") + "\nFINAL(43)";
                    default -> "FINAL(42)";
                },
                limits(RunLimits.DEFAULTS));
        Session s = withContext("x");
        RunOutcome outcome = solve(s, "q");
        assertThat(outcome.answer()).isEqualTo("42");
        assertThat(outcome.figures().iterations()).isEqualTo(3);
        JsonNode iterations = lastTrace(s).path("rlm").path("root").path("iterations");
        assertThat(iterations.path(0).path("note").asText()).contains("without any code run was refused");
        assertThat(iterations.path(1).path("note").asText()).contains("asked again");
        assertThat(model.seen.get(1).last()).startsWith("No code ran this turn, and none has run yet");
        assertThat(model.seen.get(2).last()).startsWith("REPL output:\n42").contains("Your answer came with code");
    }

    @Test
    void iterationsStopTheRunWithTheBestAnswerSoFar() throws Exception {
        RunLimits d = RunLimits.DEFAULTS;
        start(
                t -> repl("answer['content'] = 'partial %d'\nprint('working')".formatted(t.index())),
                limits(new RunLimits(2, 4, 256, null, null, null, null, 5, 20_000, 0.85, 8)));
        RunOutcome outcome = solve(withContext("x"), "q");
        assertThat(outcome.ready()).isFalse();
        assertThat(outcome.answer()).isEqualTo("partial 4");
        assertThat(outcome.stoppedBy()).isEqualTo("max_iterations");
        assertThat(outcome.stopMessage()).contains("max_iterations");
    }

    @Test
    void eachBudgetStopsTheRunAndSaysWhich() throws Exception {
        String never = "answer['content'] = 'so far'\nprint(1)";
        record Case(RunLimits limits, String stop, long tokens, Map<String, ModelPrice> prices) {}
        RunLimits d = RunLimits.DEFAULTS;
        for (Case c : new Case[] {
            new Case(
                    new RunLimits(2, 30, 256, null, 1000L, null, null, 5, 20_000, 0.85, 8),
                    "max_input_tokens",
                    300,
                    Map.of()),
            new Case(
                    new RunLimits(2, 30, 256, null, null, 1000L, null, 5, 20_000, 0.85, 8),
                    "max_output_tokens",
                    300,
                    Map.of()),
            new Case(
                    new RunLimits(2, 30, 256, null, null, null, 0.01, 5, 20_000, 0.85, 8),
                    "max_cost_usd",
                    200,
                    Map.of("scripted", new ModelPrice(3, 15))),
            new Case(
                    new RunLimits(2, 30, 256, Duration.ofSeconds(2), null, null, null, 5, 20_000, 0.85, 8),
                    "max_time",
                    -1,
                    Map.of()),
            new Case(new RunLimits(2, 30, 1, null, null, null, null, 5, 20_000, 0.85, 8), "max_children", -1, Map.of()),
            new Case(
                    new RunLimits(2, 30, 256, null, null, null, null, 3, 20_000, 0.85, 8),
                    "max_consecutive_errors",
                    -1,
                    Map.of())
        }) {
            start(
                    t -> switch (c.stop()) {
                        case "max_time" -> repl(never + "\nimport time\ntime.sleep(0.5)");
                        case "max_children" ->
                            t.question().equals("q")
                                    ? repl(never + "\nprint(rlm_query_batched(['c'] * 3, ['1', '2', '3']))")
                                    : repl("answer['content'] = 'c'\nanswer['ready'] = True");
                        case "max_consecutive_errors" -> repl("answer['content'] = 'so far'\n1 / 0");
                        default -> repl(never);
                    },
                    new RlmConfig(c.limits(), c.prices(), Map.of(), 128_000));
            model.tokensPerCall = c.tokens();
            Session root;
            try {
                root = withContext("x");
            } catch (RuntimeException e) {
                throw new AssertionError(c.stop(), e);
            }
            RunOutcome outcome = solve(root, "q");
            assertThat(outcome.stoppedBy()).as(c.stop()).isEqualTo(c.stop());
            assertThat(outcome.answer()).as(c.stop()).isEqualTo("so far");
            assertThat(outcome.stopMessage()).as(c.stop()).contains(c.stop());
            if (c.stop().equals("max_cost_usd")) {
                assertThat(outcome.figures().costUsd()).isGreaterThanOrEqualTo(0.01);
            }
            sessions.close();
            sessions = null;
        }
    }

    @Test
    void cancellingTheRootStopsEveryChildAndFreesItsKernelWithinASecond() throws Exception {
        start(
                t -> t.question().equals("q")
                        ? repl("print(rlm_query_batched(['sleep'] * 4, ['a', 'b', 'c', 'd']))")
                        : repl("import time\ntime.sleep(600)"),
                limits(RunLimits.DEFAULTS));
        Session s = withContext("x");
        CallContext call = CallContext.create();
        CompletableFuture<RunOutcome> running = CompletableFuture.supplyAsync(
                () -> runs.solve(s, "q", new RunOptions(null, null), null, RunProgress.NONE, call));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (model.seen.stream().filter(t -> t.question().equals("sleep")).count() < 4
                && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        Thread.sleep(300);
        int kernelsBusy = sessions.kernels().sessionKernels();
        assertThat(kernelsBusy).isGreaterThanOrEqualTo(5);
        long t0 = System.nanoTime();
        call.cancel();
        RunOutcome outcome = running.get(5, TimeUnit.SECONDS);
        assertThat((System.nanoTime() - t0) / 1e9).isLessThan(1.0);
        assertThat(outcome.stoppedBy()).isEqualTo("cancelled");
        // a killed kernel's slot comes back once the process is reaped
        while (sessions.kernels().sessionKernels() > 1 && System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(1)) {
            Thread.sleep(10);
        }
        assertThat(sessions.kernels().sessionKernels()).isLessThanOrEqualTo(1);
        // the root's session lives on with its variables
        assertThat(s.listVars().body().variables()).extracting(v -> v.name()).contains("context");
    }

    @Test
    void compactionSummarizesIntoHistoryAndKeepsTheVariables() throws Exception {
        String pad = "I am thinking at length about this. ".repeat(60);
        start(
                t -> {
                    if (t.last().startsWith("Summarize your progress")) {
                        return "Summary: x holds 5.";
                    }
                    if (ScriptedBackend.hasMessage(t.request(), "Earlier turns were summarized")) {
                        return repl("answer['content'] = f'{x} {len(history)}'\nanswer['ready'] = True");
                    }
                    return pad + repl(t.index() == 1 ? "x = 5\nprint('set')" : "print('more')");
                },
                new RlmConfig(
                        new RunLimits(2, 30, 256, null, null, null, null, 5, 20_000, 0.5, 8),
                        Map.of(),
                        Map.of(),
                        2_000));
        Session s = withContext("x");
        RunOutcome outcome = solve(s, "q");
        assertThat(outcome.ready()).isTrue();
        assertThat(outcome.answer()).matches("5 \\d+");
        JsonNode iterations = lastTrace(s).path("rlm").path("root").path("iterations");
        assertThat(iterations.findValuesAsText("note")).anyMatch(n -> n.startsWith("compaction"));
        assertThat(s.listVars().body().variables()).extracting(v -> v.name()).contains("x", "history");
    }

    @Test
    void identicalSubCallsAreAnsweredFromTheCache() throws Exception {
        start(
                t -> {
                    if (!t.rlm()) {
                        return "sub " + t.last();
                    }
                    if (t.question().equals("q")) {
                        return t.index() == 1 ? repl("""
                        a = [llm_query("same"), llm_query("same"), llm_query("other")]
                        b = [rlm_query("child", "ctx"), rlm_query("child", "ctx"), rlm_query("child", "ctx2")]
                        print(a, b)
                        """) : "FINAL(ok)";
                    }
                    return repl("answer['content'] = 'c:' + context\nanswer['ready'] = True");
                },
                limits(RunLimits.DEFAULTS));
        RunOutcome outcome = solve(withContext("x"), "q");
        assertThat(outcome.figures().cacheHits()).isEqualTo(2);
        assertThat(outcome.figures().children()).isEqualTo(2);
        assertThat(model.seen.stream().filter(t -> !t.rlm())).hasSize(2);
    }

    @Test
    void anAgentsStepCanCallRlmQueryAndItsTraceEntryHoldsTheChildren() throws Exception {
        start(t -> repl("answer['content'] = context.upper()\nanswer['ready'] = True"), limits(RunLimits.DEFAULTS));
        Session s = sessions.create("agent", Limits.NONE);
        var result = ((dev.rlmmcp.core.StepOutcome.Done) runs.execute(
                        s,
                        new StepRequest(
                                "r = rlm_query('shout', context='hello')\nprint(r)",
                                Duration.ofSeconds(30),
                                dev.rlmmcp.core.StepExtras.NONE,
                                CallContext.NONE)))
                .result();
        assertThat(result.exec().stdout()).isEqualTo("HELLO\n");
        JsonNode entry = lastTrace(s);
        assertThat(entry.path("rlm")
                        .path("calls")
                        .path(0)
                        .path("child")
                        .path("answer")
                        .asText())
                .isEqualTo("HELLO");
    }

    private JsonNode lastTrace(Session s) throws Exception {
        var view = s.trace(0, 1000);
        JsonNode steps = JSON.valueToTree(view).path("steps");
        return steps.get(steps.size() - 1);
    }
}

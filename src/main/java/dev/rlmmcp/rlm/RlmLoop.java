package dev.rlmmcp.rlm;

import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.HostCallbacks;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.StepExtras;
import dev.rlmmcp.core.StepOutput;
import dev.rlmmcp.core.StepRequest;
import dev.rlmmcp.core.StepResult;
import dev.rlmmcp.llm.LlmException;
import dev.rlmmcp.llm.LlmMessage;
import dev.rlmmcp.llm.LlmRequest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * One RLM: a model asked turn by turn, the code of each turn run in its session's kernel, until it
 * answers or a limit stops it. The same loop serves the root of a run and every child. A turn's code
 * always runs before an answer of that turn counts; an answer in a turn without code counts only once
 * some code of this RLM has run; the conversation is summarized into {@code history} when it nears
 * the model's context window.
 */
final class RlmLoop {

    private static final int MESSAGE_KEPT = 20_000;

    private final RlmRuns.Env env;
    private final Run run;
    private final Session session;
    private final String id;
    private final int depth;
    private final String prompt;
    private final String model;
    /** The model as the backend named it in its first answer, where none was asked for by name. */
    private String answeredBy;

    private final String contextInfo;
    private final int maxIterations;
    private final Instant started = Instant.now();
    private final String system;
    /** Every message sent over this RLM's life, for the trajectory; each turn's prompt is a range of it. */
    private final List<Trajectory.Message> log = new ArrayList<>();

    private final List<Trajectory.Iteration> iterations = new ArrayList<>();
    private final List<LlmMessage> messages = new ArrayList<>();
    private final Compaction compaction;

    private volatile List<Trajectory.SubCall> blockCalls = new ArrayList<>();
    private int promptFrom;
    private long inputTokens;
    private long outputTokens;
    private double costUsd;
    private boolean costKnown;
    private long lastPromptTokens;
    private String best;
    private boolean ranCode;
    private int nextChild;
    private volatile boolean cancelled;
    private volatile CallContext step;
    /** The loop's thread while it waits for the model (interrupted to cancel), else null. */
    private volatile Thread waiting;

    RlmLoop(
            RlmRuns.Env env,
            Run run,
            Session session,
            String id,
            int depth,
            String prompt,
            String model,
            String contextInfo,
            Integer maxIterations) {
        this.env = env;
        this.run = run;
        this.session = session;
        this.id = id;
        this.depth = depth;
        this.prompt = prompt;
        this.model = model;
        this.contextInfo = contextInfo;
        this.maxIterations = maxIterations == null
                ? run.limits.maxIterations()
                : Math.min(maxIterations, run.limits.maxIterations());
        this.system = LoopPrompt.system(run.limits.outputCap(), depth + 1 < run.limits.maxDepth());
        this.compaction = new Compaction(env, run, session, model);
    }

    synchronized String nextChildId() {
        return id + "." + (++nextChild);
    }

    /**
     * Stops this RLM soon: the step under way is cancelled (its kernel interrupted), a model call under
     * way abandoned.
     */
    void cancel() {
        cancelled = true;
        CallContext s = step;
        if (s != null) {
            s.cancel();
        }
        Thread t = waiting;
        if (t != null) {
            t.interrupt();
        }
    }

    /** Runs the loop to its end; the RLM's node of the trajectory. */
    Trajectory.Node run() {
        long t0 = System.nanoTime();
        StopReason stoppedBy = null;
        String failure = null;
        boolean ready = false;
        try (CallContext.Registration stop = run.onStop(this::cancel)) {
            start();
            stoppedBy = turns();
            ready = stoppedBy == null;
        } catch (RlmException e) {
            failure = e.getMessage();
        } catch (InterruptedException e) {
            stoppedBy = run.stopped() != null ? run.stopped() : StopReason.CANCELLED;
            if (!cancelled) {
                Thread.currentThread().interrupt();
            }
        }
        if (cancelled) {
            Thread.interrupted(); // the loop's own interrupt of a model call: not its caller's
        }
        String ended = failure != null ? "error: " + failure : stoppedBy == null ? null : stoppedBy.wireName();
        return new Trajectory.Node(
                id,
                depth,
                prompt,
                model != null ? model : answeredBy,
                contextInfo,
                List.copyOf(log),
                List.copyOf(iterations),
                best,
                ready,
                ended,
                inputTokens,
                outputTokens,
                costKnown ? costUsd : null,
                (System.nanoTime() - t0) / 1e6,
                started.toString());
    }

    /**
     * Asks the model turn after turn: null once it has answered (and the run is not stopped), else what
     * stopped it. Iterations and consecutive errors end this RLM; at the root they end the run, a child's
     * parent goes on.
     */
    private StopReason turns() throws InterruptedException {
        MeteredBackend turns = MeteredBackend.turns(run, env.backend());
        int errors = 0;
        for (int i = 1; ; i++) {
            if (run.stopped() != null || cancelled) {
                return run.stopped() != null ? run.stopped() : StopReason.CANCELLED;
            }
            if (i > maxIterations) {
                if (depth == 0) {
                    run.stop(
                            StopReason.MAX_ITERATIONS,
                            ("the root RLM took its %d turns without an answer " + "(max_iterations)")
                                    .formatted(maxIterations));
                }
                return StopReason.MAX_ITERATIONS;
            }
            compactIfFull(turns);
            Turn turn = turn(i, turns);
            if (turn.answered) {
                // a limit reached while the turn's code ran stops the run although that code answered: the stop's
                // interrupt may reach the code before or after its answer, and the run reports the limit either way
                return run.stopped();
            }
            errors = turn.error ? errors + 1 : 0;
            if (errors >= run.limits.maxConsecutiveErrors()) {
                if (depth == 0) {
                    run.stop(
                            StopReason.MAX_CONSECUTIVE_ERRORS,
                            "%d turns in a row failed (max_consecutive_errors)".formatted(errors));
                }
                return StopReason.MAX_CONSECUTIVE_ERRORS;
            }
        }
    }

    private void start() {
        promptFrom = log.size();
        log(new LlmMessage("system", system));
        String first = LoopPrompt.first(prompt, contextInfo);
        messages.clear();
        messages.add(LlmMessage.user(first));
        log(messages.getFirst());
    }

    private record Turn(boolean answered, boolean error) {}

    /** Where a turn began: its index, the range of the log its prompt is, and when it started. */
    private record Began(int index, int from, int to, long t0, Instant at) {}

    private Turn turn(int index, MeteredBackend turns) throws InterruptedException {
        Began began = new Began(index, promptFrom, log.size(), System.nanoTime(), Instant.now());
        MeteredBackend.Charged reply;
        try {
            reply = ask(turns, new LlmRequest(messages, system, null, model));
        } catch (LlmException e) {
            String note = "the model call failed: " + e.code() + ": " + e.getMessage();
            record(began, null, new Outcome(List.of(), null, note, true), null, ms(began.t0()));
            if (ContextWindow.LIMIT.equals(e.limit())) {
                // the same prompt would be refused again: this RLM ends now, not after max_consecutive_errors
                throw new RlmException(dev.rlmmcp.base.ErrorCode.TOO_LARGE, note, null, "send a smaller prompt");
            }
            return new Turn(false, true);
        }
        double modelMs = ms(began.t0());
        if (answeredBy == null) {
            answeredBy = reply.answer().model();
        }
        count(reply);
        String response = reply.answer().text();
        CodeBlocks parsed = CodeBlocks.parse(response);
        addMessage(LlmMessage.assistant(response));
        if (run.stopped() != null) {
            Outcome notRun = new Outcome(List.of(), null, "not run: " + run.stopMessage(), false);
            record(began, response, notRun, reply, modelMs);
            return new Turn(false, false);
        }
        Outcome outcome = parsed.code().isEmpty() ? withoutCode(parsed) : withCode(parsed);
        if (outcome.finalAnswer() != null) {
            best = outcome.finalAnswer();
        }
        record(began, response, outcome, reply, modelMs);
        return new Turn(outcome.finalAnswer() != null, outcome.error());
    }

    /** Adds a turn to the trajectory (without a reply when the model call failed) and tells the run. */
    private void record(Began began, String response, Outcome outcome, MeteredBackend.Charged reply, double modelMs) {
        iterations.add(new Trajectory.Iteration(
                began.index(),
                began.from(),
                began.to(),
                response,
                outcome.runs(),
                outcome.finalAnswer(),
                outcome.note(),
                reply == null ? 0 : reply.in(),
                reply == null ? 0 : reply.out(),
                reply == null ? null : reply.cost(),
                ms(began.t0()),
                modelMs,
                began.at().toString()));
        run.turn(began.index(), depth);
    }

    /** What a turn came to: its code as run, the answer it gave (or null), a note, and whether it failed. */
    private record Outcome(List<Trajectory.CodeRun> runs, String finalAnswer, String note, boolean error) {}

    /**
     * Runs the turn's blocks in order, until one sets the answer ready. Their output goes back to the
     * model, and so does an answer written outside them: asked for again now that the output is seen.
     */
    private Outcome withCode(CodeBlocks parsed) throws InterruptedException {
        List<Trajectory.CodeRun> runs = new ArrayList<>();
        StringBuilder shown = new StringBuilder();
        boolean several = parsed.code().size() > 1;
        boolean error = false;
        for (int b = 0; b < parsed.code().size(); b++) {
            Block block = runBlock(parsed.code().get(b));
            runs.add(block.run());
            error |= block.failed();
            shown.append(shown.isEmpty() ? "" : "\n\n")
                    .append(several ? "REPL output (block " + (b + 1) + "):\n" : "REPL output:\n")
                    .append(block.shown());
            if (block.answer() != null && !block.answer().content().isEmpty()) {
                best = block.answer().content();
            }
            if (block.answer() != null && block.answer().ready()) {
                ranCode = true;
                return new Outcome(List.copyOf(runs), block.answer().content(), null, error);
            }
            if (block.fatal() || Thread.currentThread().isInterrupted()) {
                break;
            }
        }
        ranCode = true;
        String note = null;
        if (parsed.answers()) {
            note = "an answer came with code: asked again after the code ran";
            shown.append("\n\n").append(LoopPrompt.ASK_AGAIN);
            if (parsed.finalText() != null) {
                best = parsed.finalText();
            }
        }
        addMessage(LlmMessage.user(shown.toString()));
        return new Outcome(List.copyOf(runs), null, note, error);
    }

    /** A turn without code: its answer counts once code of this RLM has run; else it is refused. */
    private Outcome withoutCode(CodeBlocks parsed) {
        if (!parsed.answers() || !ranCode) {
            addMessage(LlmMessage.user(parsed.answers() ? LoopPrompt.NO_CODE_YET : LoopPrompt.NO_CODE));
            return new Outcome(
                    List.of(),
                    null,
                    parsed.answers() ? "an answer without any code run was refused" : "no code in this turn",
                    true);
        }
        String answer = parsed.finalText() != null ? parsed.finalText() : variable(parsed.finalVar());
        if (answer != null) {
            return new Outcome(List.of(), answer, null, false);
        }
        addMessage(LlmMessage.user("FINAL_VAR(" + parsed.finalVar() + ") names no variable: define it in a ```repl "
                + "block first, or answer with answer[\"content\"] and answer[\"ready\"] = True."));
        return new Outcome(List.of(), null, "FINAL_VAR named " + parsed.finalVar() + ", which is not a variable", true);
    }

    /** A code block as run: what the trajectory keeps, what the model is shown, and the answer dict after it. */
    private record Block(
            Trajectory.CodeRun run, String shown, StepOutput.RlmAnswer answer, boolean failed, boolean fatal) {}

    private Block runBlock(String code) throws InterruptedException {
        List<Trajectory.SubCall> calls = new ArrayList<>();
        blockCalls = calls;
        long t0 = System.nanoTime();
        StepResult result = execute(code);
        if (cancelled && run.stopped() == StopReason.CANCELLED) {
            throw new InterruptedException("the run was cancelled");
        }
        StepOutput exec = result.exec();
        String out = ReplOutput.shown(result, run.limits.outputCap());
        List<Trajectory.SubCall> made;
        synchronized (calls) {
            made = List.copyOf(calls);
        }
        Trajectory.CodeRun codeRun = codeRun(code, result, t0, made);
        boolean fatal = result.loss() != null && depth > 0;
        if (fatal) {
            // a child keeps nothing in a snapshot: with its kernel gone, its context is gone
            throw new RlmException(
                    dev.rlmmcp.base.ErrorCode.KERNEL_UNAVAILABLE,
                    "the child's kernel " + result.loss().message(),
                    null,
                    "keep each child's work within its memory and time limits");
        }
        return new Block(
                codeRun, out, exec == null ? null : exec.answer(), exec == null || exec.error() != null, fatal);
    }

    /** Runs a block in the session's kernel, its rlm_query calls served by children of this RLM. */
    private StepResult execute(String code) throws InterruptedException {
        ChildRuns children = new ChildRuns(env, run, this, session, depth, model, this::recordCall, HostCallbacks.NONE);
        StepExtras extras = new StepExtras(
                null,
                MeteredBackend.subCalls(run, env.backend(), depth + 1, this::recordCall),
                depth,
                children,
                null,
                true,
                null);
        CallContext context = CallContext.create();
        step = context;
        StepResult result;
        try {
            if (cancelled) {
                throw new InterruptedException("cancelled");
            }
            result =
                    session.execute(new StepRequest(code, run.timeLeft(session.defaultStepTimeout()), extras, context));
        } finally {
            step = null;
            children.close();
        }
        return result;
    }

    /** What the trajectory keeps of a block as run: its output clipped, its error, times and sub-calls. */
    private static Trajectory.CodeRun codeRun(String code, StepResult result, long t0, List<Trajectory.SubCall> made) {
        StepOutput exec = result.exec();
        return new Trajectory.CodeRun(
                code,
                exec == null ? "" : clip(exec.stdout()),
                exec == null || exec.stderr().isEmpty() ? null : clip(exec.stderr()),
                exec == null
                        ? result.message()
                        : exec.error() == null
                                ? null
                                : exec.error().type() + ": " + exec.error().message(),
                ms(t0),
                exec == null ? null : exec.durationMs(),
                exec == null ? List.of() : exec.variablesChanged(),
                made);
    }

    private void recordCall(Trajectory.SubCall call) {
        List<Trajectory.SubCall> calls = blockCalls;
        synchronized (calls) {
            calls.add(call);
        }
    }

    private String variable(String name) {
        try {
            var page = session.getVar(name, 0, 1_000_000).body();
            return page.value();
        } catch (RlmException e) {
            return null;
        }
    }

    private void compactIfFull(MeteredBackend turns) throws InterruptedException {
        if (!compaction.due(system, messages, lastPromptTokens)) {
            return;
        }
        long t0 = System.nanoTime();
        Instant at = Instant.now();
        List<LlmMessage> asked = Compaction.request(messages);
        int from = promptFrom;
        log(asked.getLast());
        MeteredBackend.Charged reply;
        try {
            reply = ask(turns, new LlmRequest(asked, system, null, model));
        } catch (LlmException e) {
            iterations.add(Compaction.failed(e, from, log.size(), t0, at));
            return;
        }
        count(reply);
        iterations.add(compaction.summarized(messages, reply, from, log.size(), t0, at));
        start();
        addMessage(LlmMessage.user(LoopPrompt.compacted(reply.answer().text())));
        lastPromptTokens = 0;
    }

    private MeteredBackend.Charged ask(MeteredBackend turns, LlmRequest request)
            throws LlmException, InterruptedException {
        waiting = Thread.currentThread();
        try {
            if (cancelled) {
                throw new InterruptedException("cancelled");
            }
            return turns.charged(request, session.llmLimits().callTimeout());
        } finally {
            waiting = null;
            if (cancelled) {
                Thread.interrupted();
            }
        }
    }

    private void count(MeteredBackend.Charged reply) {
        inputTokens += reply.in();
        outputTokens += reply.out();
        lastPromptTokens = reply.in() + reply.out();
        if (reply.cost() != null) {
            costUsd += reply.cost();
            costKnown = true;
        }
    }

    private void addMessage(LlmMessage m) {
        messages.add(m);
        log(m);
    }

    private void log(LlmMessage m) {
        log.add(new Trajectory.Message(m.role(), clip(m.content())));
    }

    private static String clip(String s) {
        return s.length() <= MESSAGE_KEPT
                ? s
                : s.substring(0, MESSAGE_KEPT) + "… [" + (s.length() - MESSAGE_KEPT) + " more characters]";
    }

    static double ms(long t0) {
        return Math.round((System.nanoTime() - t0) / 1e4) / 100.0;
    }
}

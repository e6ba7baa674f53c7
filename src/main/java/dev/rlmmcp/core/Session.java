package dev.rlmmcp.core;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.data.Download;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.kernel.protocol.KernelRequest;
import dev.rlmmcp.kernel.protocol.MemoryUse;
import dev.rlmmcp.kernel.protocol.SnapshotWritten;
import dev.rlmmcp.llm.LlmAccount;
import dev.rlmmcp.llm.LlmLimits;
import dev.rlmmcp.llm.LlmService;
import dev.rlmmcp.store.StateStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Supplier;

/**
 * One REPL: a kernel started on first use, and the calls made on it, one at a time, each recorded
 * in the trace and counted against the session's guardrails. A kernel that dies is replaced at
 * once, and the caller is told plainly what was lost. The calls themselves are {@link KernelCalls}'s,
 * the session's account of itself (state, counts, trace, stored record) {@link SessionLedger}'s.
 *
 * <p>With a {@link StateStore}, the session's record and trace are written to it as they change,
 * and the variables a call changed are written by the kernel into the session's snapshot directory
 * before the call's reply, but for a change too large to write without delaying the reply: that one
 * is written right after it (the reply names it as still being written; with durable replies it is
 * written before the reply too, and fsynced). A new kernel (after a crash, an idle release or a server
 * restart) restores that snapshot; variables load on first use. A kernel found dead when a call comes
 * is replaced before the call runs, and the call's reply names what was lost; so does the first reply
 * after a restart, for what a stop cut short.
 */
public final class Session implements AutoCloseable {

    static final int TRACE_KEPT = Trace.KEPT;

    private final String id;
    private final KernelFactory kernels;
    private final Settings settings;
    private final Guardrails guardrails;
    private final LlmAccount llmAccount;
    private final StateStore store;
    private final SessionLock lock;
    private final SessionKernel kernel;
    private final Trace trace;
    private final SeenVariables seen;
    private final Snapshots snapshots;
    private final SessionLedger ledger;
    private final KernelCalls calls;
    private final SessionLoads loads;
    private final KernelRelease release;
    private final SessionSteps steps;
    private final AgentSteps agentSteps;
    private final String name;

    Session(String id, String name, Limits limits, KernelFactory kernels, LlmService llm, LlmLimits llmLimits) {
        this(id, name, limits, kernels, llm, llmLimits, Instant.now(), null, null);
    }

    Session(
            String id,
            String name,
            Limits limits,
            KernelFactory kernels,
            LlmService llm,
            LlmLimits llmLimits,
            Instant created,
            StateStore store,
            ScheduledExecutorService timer) {
        this.id = id;
        this.name = name;
        this.lock = new SessionLock(id);
        this.kernels = kernels;
        this.settings = kernels.settings();
        this.guardrails = new Guardrails(limits);
        this.llmAccount = new LlmAccount(llmLimits);
        this.store = store;
        this.kernel = new SessionKernel(id, kernels, store);
        this.trace = new Trace();
        this.seen = new SeenVariables();
        this.snapshots = new Snapshots(id, store, timer, this::snapshotWhenDue, this::save);
        this.ledger = new SessionLedger(
                id, name, created, store, kernels.json(), guardrails, llmAccount, trace, snapshots, kernel);
        this.calls = new KernelCalls(id, lock, kernel, snapshots, seen, settings, store, ledger);
        this.loads = new SessionLoads(id, settings, guardrails, calls, ledger);
        this.release = new KernelRelease(id, lock, kernel, snapshots, calls, ledger, store);
        this.steps = new SessionSteps(id, guardrails, llm, llmAccount, calls, ledger);
        this.agentSteps =
                new AgentSteps(id, store == null ? null : store.directory().resolve("suspended"));
        lock.refuseWhile(agentSteps::refusal);
    }

    private void snapshotWhenDue() {
        calls.snapshotWhenDue();
    }

    private void save(Instant snapshotAt) {
        ledger.save(snapshotAt);
    }

    /**
     * A new session, written to the store at once if {@code saveNow}, else with its first step (a
     * connection's default session that is never used leaves nothing behind).
     */
    static Session create(
            String id,
            String name,
            Limits limits,
            KernelFactory kernels,
            LlmService llm,
            LlmLimits llmLimits,
            StateStore store,
            ScheduledExecutorService timer,
            boolean saveNow) {
        Session session = new Session(id, name, limits, kernels, llm, llmLimits, Instant.now(), store, timer);
        session.kernel.madeHere();
        if (saveNow) {
            session.ledger.save();
        }
        return session;
    }

    /**
     * A session kept in memory only (no record, no snapshot, not listed), such as a child RLM's: its
     * kernel, a warm one where one fits, may write {@code dir} (deleted when the session closes) to
     * hand values to other kernels, and does not see {@code hidden}.
     */
    static Session scratch(
            String id, Session parent, KernelFactory kernels, LlmService llm, Path dir, Path hidden, Duration wait) {
        Session session = new Session(id, id, parent.limits(), kernels, llm, parent.llmLimits());
        session.kernel.scratch(dir, hidden);
        // its kernel is given back when it answers: at capacity it waits in line (as long as a call may
        // run, or its run's time allows; cancelling the run interrupts the wait) rather than fail
        Duration most = kernels.settings().maxTimeout();
        session.kernel.queueFor(wait == null || wait.compareTo(most) > 0 ? most : wait);
        return session;
    }

    /** How many kernels may run at once (--max-kernels, or what the machine allows). */
    public int kernelPlaces() {
        return kernels.budget().maxKernels();
    }

    /**
     * A session read back from the store after a restart, from its record; its kernel starts, and
     * restores, on first use, and its {@code trace} entries are read when the trace is first used.
     */
    static Session restore(
            String id,
            String record,
            Supplier<List<String>> trace,
            KernelFactory kernels,
            LlmService llm,
            StateStore store,
            ScheduledExecutorService timer)
            throws IOException {
        SessionRecord r = SessionRecords.read(kernels.json(), id, record, llm.defaults());
        Session session =
                new Session(r.id(), r.name(), r.limits(), kernels, llm, r.llmLimits(), r.created(), store, timer);
        session.ledger.lastActive = r.lastActive();
        session.ledger.state = r.state();
        session.ledger.stoppedBy = r.stoppedBy();
        session.ledger.finalAnswer = r.finalAnswer();
        session.kernel.restoredRestarts(r.kernelRestarts());
        session.snapshots.restoredAt(r.snapshotAt());
        session.guardrails.restore(r.steps(), r.runtimeMs(), r.ioBytes());
        session.trace.restore(() -> SessionRecords.steps(kernels.json(), trace.get()), r.traceLength());
        return session;
    }

    /** The steps of this session whose sub-calls the calling agent answers. */
    public AgentSteps agentSteps() {
        return agentSteps;
    }

    public String id() {
        return id;
    }

    public String name() {
        return name;
    }

    public SessionState state() {
        return ledger.state;
    }

    public Limits limits() {
        return guardrails.limits();
    }

    public LlmLimits llmLimits() {
        return llmAccount.limits();
    }

    public Instant lastActive() {
        return ledger.lastActive;
    }

    /**
     * Runs code as the session's next step: what it printed and changed, the error if it raised, what
     * happened to the kernel, the step index and the guardrail the step tripped, if any. llm_query
     * calls go to the backend the request's {@link StepExtras} choose, its other callbacks to theirs;
     * what llm_query used is in the result and trace.
     */
    public StepResult execute(StepRequest step) {
        return steps.execute(step);
    }

    /**
     * Where this session's kernel may write, on the host (null: nowhere the host can read): the
     * directory a value handed to another kernel is written to.
     */
    public Path writableDir() {
        return kernel.writableDir();
    }

    /**
     * Makes {@code answer} the RLM answer protocol's dict ({@code {"content": "", "ready": False}}),
     * refused if the name holds a value of the session's that is not such a dict.
     */
    public void beginLoop() {
        calls.call(new KernelRequest.RlmBegin(), null, settings.defaultTimeout(), CallContext.NONE);
    }

    /**
     * Binds {@code name} to the value pickled in {@code file} (written by another kernel), streamed from
     * the file to the kernel in bounded chunks, never whole in this process.
     */
    public LoadResult loadPickle(String name, Path file, CallContext context) throws IOException {
        long size = Files.size(file);
        Download download = new Download(Files.newInputStream(file), size, name, null);
        return loadStream(name, DataType.PICKLE, download, name, "rlm_query context -> " + name, context);
    }

    /**
     * Appends an RLM run to the trace: the question, how it ended, and its tree ({@code rlm}, the
     * trajectory as JSON).
     */
    public void recordRun(String question, String status, String answer, double ms, JsonNode rlm) {
        try (var held = lock.hold()) {
            ledger.record(
                    null,
                    "rlm",
                    question,
                    status,
                    answer == null ? "" : answer,
                    List.of(),
                    ms,
                    0,
                    null,
                    null,
                    null,
                    rlm);
        }
    }

    public LoadResult loadData(String name, String data, DataType type, CallContext context) {
        return loads.data(name, data, type, context);
    }

    /** Loads a file the caller has already confined to the data root; the kernel reads it itself. */
    public LoadResult loadFile(String name, Path file, String shownPath, DataType type, CallContext context) {
        return loads.file(name, file, shownPath, type, context);
    }

    /**
     * Streams a download into a variable: bytes go from the source to the kernel's pipe in bounded
     * chunks as they arrive, never whole in this JVM. A declared size over the memory limit is refused
     * before any byte moves; a stream that passes the limit is cut, and nothing is stored. A failed
     * source leaves the session as it was.
     */
    public LoadResult loadStream(
            String name, DataType type, Download download, String argument, String what, CallContext context) {
        return loads.stream(name, type, download, argument, what, context);
    }

    /** One page of a variable's value, rendered for a model (the text itself, JSON, or repr). */
    public KernelAnswer<VarPage> getVar(String name, long offset, long maxChars) {
        return calls.answer(
                calls.call(
                        new KernelRequest.Get(name, offset, maxChars),
                        null,
                        settings.defaultTimeout(),
                        CallContext.NONE),
                WireRecords::page);
    }

    /**
     * Closes the session with its final answer, given as text or as the name of a variable whose
     * rendered value is the answer. Later steps are refused; the answer stays readable.
     */
    public Finalized finish(String finalText, String finalVariable) {
        try (var held = calls.enter(settings.defaultTimeout())) {
            if (ledger.state != SessionState.STOPPED) {
                ledger.requireOpen();
            }
            String answer = finalText;
            if (answer == null) {
                answer = getVar(finalVariable, 0, Integer.MAX_VALUE - 8).body().value();
            }
            ledger.finalAnswer = answer;
            ledger.state = SessionState.FINALIZED;
            ledger.lastActive = Instant.now();
            ledger.save();
            ledger.record(
                    null,
                    "finalize",
                    finalText != null ? "final_text" : "final_var_name " + finalVariable,
                    "done",
                    "",
                    List.of(),
                    0,
                    0,
                    null,
                    null,
                    null);
            return new Finalized(summary(), answer);
        }
    }

    /** Trace entries [start, end), with the session's totals. */
    public TraceView trace(int start, int end) {
        return trace.view(summary(), start, end, ledger.finalAnswer);
    }

    /** What rlm_sessions shows of a session: no kernel call, so listing never waits on running code. */
    public SessionSummary summary() {
        return SessionSummary.of(
                ledger.stored(snapshots.at()),
                llmAccount.calls(),
                llmAccount.tokens(),
                ledger.memoryBytes,
                hasKernel(),
                store != null,
                snapshots.last(),
                settings.defaultTimeout());
    }

    /** The step timeout a call gets when it names none: the session's, else the server's default. */
    public Duration defaultStepTimeout() {
        Limits limits = guardrails.limits();
        return limits.stepTimeout() == null ? settings.defaultTimeout() : limits.stepTimeout();
    }

    public KernelAnswer<Variables> listVars() {
        KernelAnswer<Variables> answer = calls.answer(
                calls.call(new KernelRequest.Vars(), null, settings.defaultTimeout(), CallContext.NONE),
                WireRecords::variables);
        seen.see(answer.body().variables());
        return answer;
    }

    /**
     * The variables for someone watching, not working: asked of the kernel only when one is running
     * and idle, otherwise the list as last seen (or the names the trace knows). Never starts a
     * kernel, never waits for running code, never counts as activity.
     */
    public VariablesView variablesView() {
        boolean running = hasKernel();
        boolean asked = running && calls.askVariablesIfIdle();
        return seen.view(id, running, asked, trace);
    }

    /**
     * Whether the session may hold variables, found out without starting a kernel or waiting on
     * running code: an idle kernel is asked; otherwise what it was last seen holding, the names its
     * steps made, its memory and its snapshot count, so that a doubt keeps the session.
     */
    public boolean holdsVariables() {
        if (!hasKernel() && (ledger.memoryBytes > 0 || snapshots.at() != null)) {
            return true; // known without reading a restored session's trace
        }
        VariablesView view = variablesView();
        boolean listed = !view.variables().isEmpty();
        if ("kernel".equals(view.source())) {
            return listed;
        }
        return listed || ledger.memoryBytes > 0 || snapshots.at() != null;
    }

    /** Whether a call is running on this session now. */
    public boolean busy() {
        return lock.isLocked();
    }

    public KernelAnswer<Variable> varInfo(String name) {
        return calls.answer(
                calls.call(new KernelRequest.VarInfo(name), null, settings.defaultTimeout(), CallContext.NONE),
                WireRecords::variable);
    }

    public KernelAnswer<ClearResult> clear(String name) {
        return calls.answer(
                calls.call(KernelRequest.Clear.one(name), null, settings.defaultTimeout(), CallContext.NONE),
                WireRecords::cleared);
    }

    public KernelAnswer<ClearResult> clearAll() {
        return calls.answer(
                calls.call(KernelRequest.Clear.every(), null, settings.defaultTimeout(), CallContext.NONE),
                WireRecords::cleared);
    }

    public KernelAnswer<MemoryReport> memory() {
        KernelCalls.Accepted<MemoryUse> use =
                calls.call(new KernelRequest.Memory(), null, settings.defaultTimeout(), CallContext.NONE);
        var python = kernels.pythonIfKnown();
        return new KernelAnswer<>(
                id,
                new MemoryReport(
                        WireRecords.memory(use.body()),
                        kernels.launcherName(),
                        python == null ? null : python.executable().toString(),
                        python == null ? null : python.version()),
                use.notSaved(),
                use.stillWriting(),
                use.lostAtStop(),
                use.replaced());
    }

    /**
     * This session's kernel, used once and thrown away (run_python's), waits in line for a place up
     * to {@code wait} when the server is at capacity, instead of being refused after a few seconds.
     */
    public void queueForKernel(Duration wait) {
        kernel.queueFor(wait);
    }

    /** Whether a kernel process is running for this session now. */
    public boolean hasKernel() {
        return kernel.running();
    }

    /** Snapshots now what changed (for tests and benchmarks); the kernel's reply, or null. */
    public SnapshotWritten snapshotNow() {
        try (var held = lock.hold()) {
            return calls.snapshot();
        }
    }

    public int kernelRestarts() {
        return kernel.restarts();
    }

    /**
     * Releases an idle session's kernel (its variables go with it); returns false if a call is
     * running. A finalized session keeps its state; any other becomes expired.
     */
    boolean expire() {
        return release.expire();
    }

    /** Gives up an idle kernel to make room for another session's (see {@link KernelRelease#idle}). */
    boolean releaseIdle(boolean losing) {
        return release.idle(losing);
    }

    /** Whether a call is running on this session now (a snapshot being written is not one). */
    boolean callRunning() {
        return lock.callRunning();
    }

    /** At shutdown, before any kernel stops: what is not saved, each name with why (see {@link KernelRelease}). */
    Map<String, String> saveBeforeStop(Instant deadline) {
        return release.saveBeforeStop(deadline);
    }

    /** What no snapshot holds now (at shutdown, for a snapshot still being written at the deadline). */
    Map<String, String> unsavedNow(String why) {
        return snapshots.unsavedNow(why);
    }

    /** Stops the kernel at shutdown, after {@link #saveBeforeStop}, without waiting for a call still running. */
    void stopKernel() {
        release.stopKernel();
    }

    /** Stops the kernel, snapshotting first what changed (at shutdown). */
    @Override
    public void close() {
        release.close();
    }

    /** Stops the kernel without a snapshot: the session is being deleted. */
    void discard() {
        release.discard();
    }
}

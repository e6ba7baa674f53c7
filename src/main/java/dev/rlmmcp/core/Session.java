package dev.rlmmcp.core;

import dev.rlmmcp.base.Bytes;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.base.Text;
import dev.rlmmcp.data.Download;
import dev.rlmmcp.data.StreamedLoad;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.kernel.channel.Kernel;
import dev.rlmmcp.kernel.channel.KernelCallbacks;
import dev.rlmmcp.kernel.channel.KernelDiedException;
import dev.rlmmcp.kernel.channel.KernelReply;
import dev.rlmmcp.kernel.channel.TransferAbortedException;
import dev.rlmmcp.kernel.protocol.Cleared;
import dev.rlmmcp.kernel.protocol.ExecResult;
import dev.rlmmcp.kernel.protocol.KernelRequest;
import dev.rlmmcp.kernel.protocol.Loaded;
import dev.rlmmcp.kernel.protocol.MemoryUse;
import dev.rlmmcp.kernel.protocol.Refusal;
import dev.rlmmcp.kernel.protocol.SnapshotWritten;
import dev.rlmmcp.kernel.protocol.VarList;
import dev.rlmmcp.llm.LlmAccount;
import dev.rlmmcp.llm.LlmLimits;
import dev.rlmmcp.llm.LlmService;
import dev.rlmmcp.llm.LlmStep;
import dev.rlmmcp.llm.LlmUsage;
import dev.rlmmcp.store.StateStore;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One REPL: a kernel started on first use, and the calls made on it, one at a time, each recorded
 * in the trace and counted against the session's guardrails. A kernel that dies is replaced at
 * once, and the caller is told plainly what was lost.
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

    private static final Logger log = LoggerFactory.getLogger(Session.class);

    static final int TRACE_KEPT = Trace.KEPT;

    private final String id;
    private final String name;
    private final KernelFactory kernels;
    private final Settings settings;
    private final Guardrails guardrails;
    private final LlmService llm;
    private final LlmAccount llmAccount;
    private final Instant created;
    private final StateStore store;
    private final SessionLock lock;
    private final SessionKernel kernel;
    private final Trace trace;
    private final SeenVariables seen;
    private final Snapshots snapshots;
    /** Snapshot a step's changes before its reply is sent. */
    private final boolean durable;
    /** The kernel writing a snapshot outside any call, or null: a call that waits too long for it kills it. */
    private volatile Kernel writingSnapshot;
    /** A kernel death found before the current call ran: told in the call's reply (under the lock). */
    private KernelLoss replaced;
    /** Variables whose write a stop of the server cut short, found by the restore: told in the next reply. */
    private List<String> lostAtStop;
    private volatile Instant lastActive;
    private volatile SessionState state = SessionState.ACTIVE;
    private volatile String stoppedBy;
    private volatile long memoryBytes;
    private volatile String finalAnswer;

    Session(String id, String name, Limits limits, KernelFactory kernels, LlmService llm, LlmLimits llmLimits) {
        this(id, name, limits, kernels, llm, llmLimits, Instant.now(), null, null);
    }

    Session(String id, String name, Limits limits, KernelFactory kernels, LlmService llm, LlmLimits llmLimits,
            Instant created, StateStore store, ScheduledExecutorService timer) {
        this.id = id;
        this.lock = new SessionLock(id);
        this.name = name;
        this.kernels = kernels;
        this.settings = kernels.settings();
        this.guardrails = new Guardrails(limits);
        this.llm = llm;
        this.llmAccount = new LlmAccount(llmLimits);
        this.created = created;
        this.lastActive = created;
        this.store = store;
        this.kernel = new SessionKernel(id, kernels, store);
        this.trace = new Trace();
        this.seen = new SeenVariables();
        this.snapshots = new Snapshots(id, store, timer, this::snapshotWhenDue, this::save);
        this.durable = store != null && store.durableReplies();
    }

    /**
     * A new session, written to the store at once if {@code saveNow}, else with its first step (a
     * connection's default session that is never used leaves nothing behind).
     */
    static Session create(String id, String name, Limits limits, KernelFactory kernels, LlmService llm,
            LlmLimits llmLimits, StateStore store, ScheduledExecutorService timer, boolean saveNow) {
        Session session = new Session(id, name, limits, kernels, llm, llmLimits, Instant.now(), store, timer);
        session.kernel.madeHere();
        if (saveNow) {
            session.save();
        }
        return session;
    }

    /**
     * A session kept in memory only (no record, no snapshot, not listed), such as a child RLM's: its
     * kernel, a warm one where one fits, may write {@code dir} (deleted when the session closes) to
     * hand values to other kernels, and does not see {@code hidden}.
     */
    static Session scratch(String id, Limits limits, KernelFactory kernels, LlmService llm, LlmLimits llmLimits,
            Path dir, Path hidden) {
        Session session = new Session(id, id, limits, kernels, llm, llmLimits);
        session.kernel.scratch(dir, hidden);
        // its kernel is given back when it answers: at capacity it waits in line (as long as a call may
        // run; cancelling the run interrupts the wait) rather than fail
        session.kernel.queueFor(kernels.settings().maxTimeout());
        return session;
    }

    /**
     * A session read back from the store after a restart, from its record; its kernel starts, and
     * restores, on first use, and its {@code trace} entries are read when the trace is first used.
     */
    static Session restore(String id, String record, Supplier<List<String>> trace, KernelFactory kernels,
            LlmService llm, StateStore store, ScheduledExecutorService timer) throws IOException {
        SessionRecord r = SessionRecords.read(kernels.json(), id, record, llm.defaults());
        Session session = new Session(r.id(), r.name(), r.limits(), kernels, llm, r.llmLimits(), r.created(), store,
                timer);
        session.lastActive = r.lastActive();
        session.state = r.state();
        session.stoppedBy = r.stoppedBy();
        session.finalAnswer = r.finalAnswer();
        session.kernel.restoredRestarts(r.kernelRestarts());
        session.snapshots.restoredAt(r.snapshotAt());
        session.guardrails.restore(r.steps(), r.runtimeMs(), r.ioBytes());
        session.trace.restore(() -> SessionRecords.steps(kernels.json(), trace.get()), r.traceLength());
        return session;
    }

    public String id() {
        return id;
    }

    public String name() {
        return name;
    }

    public SessionState state() {
        return state;
    }

    public Limits limits() {
        return guardrails.limits();
    }

    public LlmLimits llmLimits() {
        return llmAccount.limits();
    }

    public Instant lastActive() {
        return lastActive;
    }

    /**
     * Runs code as the session's next step: what it printed and changed, the error if it raised, what
     * happened to the kernel, the step index and the guardrail the step tripped, if any. llm_query
     * calls go to the backend the request's {@link StepExtras} choose, its other callbacks to theirs;
     * what llm_query used is in the result and trace.
     */
    public StepResult execute(StepRequest step) {
        String code = step.code();
        Duration timeout = step.timeout();
        StepExtras extras = step.extras();
        CallContext context = step.context();
        acquire(timeout);
        try {
            requireOpen();
            String refused = guardrails.beforeStep();
            if (refused != null) {
                stop(refused);
                throw guardrailStop(refused);
            }
            Duration limit = guardrails.stepTimeout(timeout);
            long started = System.nanoTime();
            LlmStep llmStep = extras.llm() != null ? llm.step(llmAccount, extras.llm(), extras.depth())
                    : llm.step(llmAccount, extras.clientSampling());
            KernelCallbacks callbacks = WireRecords.callbacks(extras.callbacks());
            KernelCallbacks answering = (kind, request) -> "llm".equals(kind)
                    ? llmStep.handle(kind, request) : callbacks.handle(kind, request);
            ExecResult exec = null;
            KernelLoss loss = null;
            long interruptedAfter = -1;
            Accepted<ExecResult> accepted = null;
            try {
                KernelReply<ExecResult> reply = exchange(new KernelRequest.Exec(code,
                        WireRecords.mcp(extras.mcp()), extras.loopAnswer()), null, limit, answering, context);
                accepted = accept(reply);
                exec = accepted.body();
                interruptedAfter = reply.interrupted() && exec.interrupted() ? reply.interruptedAfterMs() : -1;
            } catch (KernelDiedException e) {
                loss = kernelLost(e, limit);
            }
            double ms = (System.nanoTime() - started) / 1e6;
            StepStatus status = loss != null ? loss.status() : interruptedAfter >= 0 ? StepStatus.INTERRUPTED
                    : exec.error() != null ? StepStatus.ERROR : StepStatus.OK;
            long io = Text.utf8Length(code)
                    + (exec == null ? 0 : Text.utf8Length(exec.stdout()) + Text.utf8Length(exec.stderr()));
            int index = guardrails.steps();
            String tripped = guardrails.afterStep(Math.round(ms), io);
            GuardrailStop guardrail = settle(index, tripped, exec == null ? null : exec.memory());
            LlmUsage usage = llmStep.usage();
            StepResult result = new StepResult(id, status, index, WireRecords.output(exec), limit, interruptedAfter, usage, guardrail,
                    accepted == null ? null : accepted.notSaved(), accepted == null ? null : accepted.stillWriting(),
                    accepted == null ? null : accepted.lostAtStop(), loss,
                    accepted == null ? null : accepted.replaced());
            List<String> changed = exec == null ? List.of() : exec.variablesChanged();
            record(index, "exec", code, status.wireName(), result.traceOutput(), changed, ms, io, tripped, usage,
                    usage == null ? null : llmStep.calls(), extras.rlm() == null ? null : extras.rlm().get());
            return result;
        } finally {
            lock.unlock();
        }
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
        call(new KernelRequest.RlmBegin(), null, settings.defaultTimeout(), CallContext.NONE);
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
        lock.lock();
        try {
            record(null, "rlm", question, status, answer == null ? "" : answer, List.of(), ms, 0, null, null, null,
                    rlm);
        } finally {
            lock.unlock();
        }
    }

    public LoadResult loadData(String name, String data, DataType type, CallContext context) {
        long io = guardrails.limits().budgetBytes() == null ? data.length() : Text.utf8Length(data);
        return load(new KernelRequest.Load(name, WireRecords.dataType(type), null), data, io, "rlm_load_data " + name + " (" + type.wireName()
                + ")", null, null, context);
    }

    /** Loads a file the caller has already confined to the data root; the kernel reads it itself. */
    public LoadResult loadFile(String name, Path file, String shownPath, DataType type, CallContext context) {
        long size;
        try {
            size = Files.size(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (settings.memoryLimitBytes() > 0 && size > settings.memoryLimitBytes()) {
            throw new RlmException(ErrorCode.TOO_LARGE,
                    "%s is %s, more than this session's memory limit of %s".formatted(shownPath, Bytes.human(size),
                            Bytes.human(settings.memoryLimitBytes())),
                    "path", "load a smaller file or a slice of it, or raise RLM_MAX_MEMORY_MB / --max-memory-mb");
        }
        return load(new KernelRequest.Load(name, WireRecords.dataType(type), file.toString()), null, size,
                "rlm_load_file " + name + " <- " + shownPath, shownPath, size, context);
    }

    /**
     * Streams a download into a variable: bytes go from the source to the kernel's pipe in bounded
     * chunks as they arrive, never whole in this JVM. A declared size over the memory limit is refused
     * before any byte moves; a stream that passes the limit is cut, and nothing is stored. A failed
     * source leaves the session as it was.
     */
    public LoadResult loadStream(String name, DataType type, Download download, String argument, String what,
            CallContext context) {
        StreamedLoad stream = StreamedLoad.of(download, settings.memoryLimitBytes(), argument, context);
        acquire(settings.maxTimeout());
        try (download) {
            requireOpen();
            long started = System.nanoTime();
            Accepted<Loaded> accepted;
            try {
                lastActive = Instant.now();
                Kernel k = bindable(ready(settings.maxTimeout()), name);
                accepted = accept(k.callStreaming(new KernelRequest.Load(name, WireRecords.dataType(type), null), stream.body(),
                        left(settings.maxTimeout(), started), settings.interruptGrace(), context));
            } catch (KernelDiedException e) {
                throw kernelError(e, settings.maxTimeout());
            } catch (TransferAbortedException e) {
                throw stream.failed(e.getCause());
            } finally {
                lastActive = Instant.now();
            }
            double ms = (System.nanoTime() - started) / 1e6;
            long sent = stream.sent();
            Loaded loaded = accepted.body();
            GuardrailStop guardrail = settle(null, guardrails.afterLoad(sent), loaded.memory());
            recordLoad(what, loaded, ms, sent, guardrail);
            return new LoadResult(id, WireRecords.loaded(loaded), null, null, stream.transfer(ms), guardrail, accepted.notSaved(),
                    accepted.stillWriting(), accepted.lostAtStop(), accepted.replaced());
        } finally {
            lock.unlock();
        }
    }

    private LoadResult load(KernelRequest.Load request, String data, long ioBytes, String what, String path,
            Long fileBytes, CallContext context) {
        acquire(settings.maxTimeout());
        try {
            requireOpen();
            long started = System.nanoTime();
            Accepted<Loaded> accepted = call(request, data, settings.maxTimeout(), context);
            double ms = (System.nanoTime() - started) / 1e6;
            Loaded loaded = accepted.body();
            GuardrailStop guardrail = settle(null, guardrails.afterLoad(ioBytes), loaded.memory());
            recordLoad(what, loaded, ms, ioBytes, guardrail);
            return new LoadResult(id, WireRecords.loaded(loaded), path, fileBytes, null, guardrail, accepted.notSaved(),
                    accepted.stillWriting(), accepted.lostAtStop(), accepted.replaced());
        } finally {
            lock.unlock();
        }
    }

    private void recordLoad(String what, Loaded loaded, double ms, long io, GuardrailStop guardrail) {
        record(null, "load", what, "done", loaded.type() + ", " + loaded.sizeHuman(), List.of(loaded.name()), ms, io,
                guardrail == null ? null : guardrail.guardrail(), null, null);
    }

    /** One page of a variable's value, rendered for a model (the text itself, JSON, or repr). */
    public KernelAnswer<VarPage> getVar(String name, long offset, long maxChars) {
        return answer(call(new KernelRequest.Get(name, offset, maxChars), null, settings.defaultTimeout(),
                CallContext.NONE), WireRecords::page);
    }

    /**
     * Closes the session with its final answer, given as text or as the name of a variable whose
     * rendered value is the answer. Later steps are refused; the answer stays readable.
     */
    public Finalized finish(String finalText, String finalVariable) {
        acquire(settings.defaultTimeout());
        try {
            if (state != SessionState.STOPPED) {
                requireOpen();
            }
            String answer = finalText;
            if (answer == null) {
                answer = getVar(finalVariable, 0, Integer.MAX_VALUE - 8).body().value();
            }
            finalAnswer = answer;
            state = SessionState.FINALIZED;
            lastActive = Instant.now();
            save();
            record(null, "finalize", finalText != null ? "final_text" : "final_var_name " + finalVariable, "done", "",
                    List.of(), 0, 0, null, null, null);
            return new Finalized(summary(), answer);
        } finally {
            lock.unlock();
        }
    }

    /** Trace entries [start, end), with the session's totals. */
    public TraceView trace(int start, int end) {
        return trace.view(summary(), start, end, finalAnswer);
    }

    /** What rlm_sessions shows of a session: no kernel call, so listing never waits on running code. */
    public SessionSummary summary() {
        return SessionSummary.of(stored(snapshots.at()), llmAccount.calls(), llmAccount.tokens(), memoryBytes,
                hasKernel(), store != null, snapshots.last(), settings.defaultTimeout());
    }

    /** The step timeout a call gets when it names none: the session's, else the server's default. */
    public Duration defaultStepTimeout() {
        Limits limits = guardrails.limits();
        return limits.stepTimeout() == null ? settings.defaultTimeout() : limits.stepTimeout();
    }

    /**
     * Releases an idle session's kernel (its variables go with it); returns false if a call is
     * running. A finalized session keeps its state; any other becomes expired.
     */
    boolean expire() {
        return lock.tryLock() && releaseKernel(true);
    }

    /**
     * Gives up an idle kernel to make room for another session's (as {@link #expire} does with a
     * store: a snapshot first, the variables back on the next call). A snapshot being written is
     * waited out (at most {@link #SNAPSHOT_WAIT}), so that the idlest session goes, not the next one.
     * False without a store, whose variables would be lost, or if a call is running or there is no kernel;
     * unless {@code losing}, also if a variable is one no snapshot can hold (it would be lost).
     */
    boolean releaseIdle(boolean losing) {
        return store != null && lock.tryLockUnlessCall(SNAPSHOT_WAIT) && releaseKernel(losing);
    }

    /** How long {@link #releaseIdle} waits for a snapshot being written before it passes the session by. */
    static final Duration SNAPSHOT_WAIT = Duration.ofSeconds(2);

    /** Whether a call is running on this session now (a snapshot being written is not one). */
    boolean callRunning() {
        return lock.callRunning();
    }

    /** {@link #expire}, the lock taken: releases it. */
    private boolean releaseKernel(boolean losing) {
        try {
            if (store != null) {
                Kernel current = kernel.current();
                if (current == null || !current.isAlive()) {
                    // a dead kernel stays, so that the next call replaces it and names what was lost
                    return false;
                }
                snapshot();
                if (!losing && !snapshots.unsavedNow("").isEmpty()) {
                    return false;
                }
                kernel.close();
                memoryBytes = 0;
                save();
                return true;
            }
            kernel.close();
            if (state != SessionState.FINALIZED) {
                state = SessionState.EXPIRED;
            }
            memoryBytes = 0;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Notes a finished step or load: the guardrail it tripped (null if none) and the memory it left. */
    private GuardrailStop settle(Integer step, String tripped, MemoryUse memory) {
        if (memory != null) {
            memoryBytes = memory.totalBytes();
        }
        if (tripped == null) {
            return null;
        }
        stop(tripped);
        return new GuardrailStop(tripped, guardrails.stopMessage(id, tripped) + " This "
                + (step == null ? "load" : "step") + " was done; further steps are refused.");
    }

    private void requireOpen() {
        switch (state) {
            case ACTIVE -> {
            }
            case FINALIZED -> throw new RlmException(ErrorCode.SESSION_FINALIZED,
                    "session " + id + " is finalized and takes no more steps", "session_id",
                    "read its answer with rlm_get_trace, or start a new session with rlm_init_context");
            case STOPPED -> throw guardrailStop(stoppedBy);
            case EXPIRED -> throw new RlmException(ErrorCode.SESSION_EXPIRED,
                    "session " + id + " expired after being idle; its kernel and variables were released",
                    "session_id", "start a new session with rlm_init_context (or omit session_id) and load the data again");
        }
    }

    private void stop(String guardrail) {
        state = SessionState.STOPPED;
        stoppedBy = guardrail;
        save();
    }

    private RlmException guardrailStop(String guardrail) {
        return new RlmException(ErrorCode.GUARDRAIL_STOP, guardrails.stopMessage(id, guardrail), "session_id",
                "finalize with rlm_finalize (final_text or final_var_name), or start a new session with higher limits");
    }

    private void record(Integer step, String kind, String input, String status, String output, List<String> changed,
            double ms, long io, String tripped, LlmUsage usage, Object llmCalls) {
        record(step, kind, input, status, output, changed, ms, io, tripped, usage, llmCalls, null);
    }

    private void record(Integer step, String kind, String input, String status, String output, List<String> changed,
            double ms, long io, String tripped, LlmUsage usage, Object llmCalls, JsonNode rlm) {
        Step entry = trace.append(step, kind, input, status, output, changed, ms, io, tripped, memoryBytes,
                usage == null ? null : kernels.json().valueToTree(usage),
                llmCalls == null ? null : kernels.json().valueToTree(llmCalls), rlm);
        snapshots.recorded();
        if (store != null) {
            SessionRecords.append(store, kernels.json(), stored(snapshots.at()), entry);
        }
    }

    /** The session as stored: everything but the trace and the variables. */
    private SessionRecord stored(Instant snapshotAt) {
        return new SessionRecord(id, name, created, lastActive, state, stoppedBy, finalAnswer, guardrails.steps(),
                guardrails.runtimeMs(), guardrails.ioBytes(), trace.length(), kernel.restarts(), snapshotAt,
                guardrails.limits(), llmAccount.limits());
    }

    private void save() {
        save(snapshots.at());
    }

    private void save(Instant snapshotAt) {
        if (store != null) {
            SessionRecords.save(store, kernels.json(), stored(snapshotAt));
        }
    }

    public KernelAnswer<Variables> listVars() {
        KernelAnswer<Variables> answer = answer(call(new KernelRequest.Vars(), null, settings.defaultTimeout(),
                CallContext.NONE), WireRecords::variables);
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
        boolean asked = false;
        if (running && lock.tryLock()) {
            try {
                Kernel k = kernel.current();
                if (k != null && k.isAlive()) {
                    KernelReply<VarList> reply = k.call(new KernelRequest.Vars(), settings.defaultTimeout(),
                            settings.interruptGrace());
                    if (reply.ok()) {
                        seen.see(WireRecords.variables(reply.body().variables()));
                        asked = true;
                    }
                }
            } catch (KernelDiedException e) {
                // the session's next call finds the dead kernel and reports the loss
            } finally {
                lock.unlock();
            }
        }
        return seen.view(id, running, asked, trace);
    }

    /**
     * Whether the session may hold variables, found out without starting a kernel or waiting on
     * running code: an idle kernel is asked; otherwise what it was last seen holding, the names its
     * steps made, its memory and its snapshot count, so that a doubt keeps the session.
     */
    public boolean holdsVariables() {
        if (!hasKernel() && (memoryBytes > 0 || snapshots.at() != null)) {
            return true; // known without reading a restored session's trace
        }
        VariablesView view = variablesView();
        boolean listed = !view.variables().isEmpty();
        if ("kernel".equals(view.source())) {
            return listed;
        }
        return listed || memoryBytes > 0 || snapshots.at() != null;
    }

    /**
     * Takes the session's lock for a call whose own time limit is {@code timeout} (null: the longest),
     * waiting no longer than that limit and the grace. A snapshot written outside any call that still
     * holds the session then is one the kernel does not finish (code in it may have taken the request
     * off its pipe): the kernel is killed, so that the next call runs on a fresh one, and this call is
     * refused without running.
     */
    private void acquire(Duration timeout) {
        Duration wait = (timeout == null ? settings.maxTimeout() : timeout).plus(settings.interruptGrace());
        long started = System.nanoTime();
        try {
            lock.acquire(wait);
        } catch (RlmException busy) {
            Kernel stuck = writingSnapshot;
            if (stuck == null || lock.callRunning() || System.nanoTime() - started < wait.toNanos()) {
                throw busy;
            }
            stuck.abandon("the kernel did not finish writing its snapshot while a call waited " + Text.seconds(wait)
                    + " s for it, so it was killed (code run in the kernel may have read its requests)");
            throw new RlmException(ErrorCode.TIMEOUT, "session " + id + " waited " + Text.seconds(wait)
                    + " s for its kernel to write a snapshot, which it did not finish: the kernel was killed, and the"
                    + " next call runs on a fresh kernel restored from the last snapshot (its reply names what was"
                    + " lost); this call did not run", "session_id", "send the call again");
        }
    }

    /** Whether a call is running on this session now. */
    public boolean busy() {
        return lock.isLocked();
    }

    public KernelAnswer<Variable> varInfo(String name) {
        return answer(call(new KernelRequest.VarInfo(name), null, settings.defaultTimeout(), CallContext.NONE),
                WireRecords::variable);
    }

    public KernelAnswer<ClearResult> clear(String name) {
        return answer(call(KernelRequest.Clear.one(name), null, settings.defaultTimeout(), CallContext.NONE),
                WireRecords::cleared);
    }

    public KernelAnswer<ClearResult> clearAll() {
        return answer(call(KernelRequest.Clear.every(), null, settings.defaultTimeout(), CallContext.NONE),
                WireRecords::cleared);
    }

    public KernelAnswer<MemoryReport> memory() {
        Accepted<MemoryUse> use = call(new KernelRequest.Memory(), null, settings.defaultTimeout(), CallContext.NONE);
        var python = kernels.pythonIfKnown();
        return new KernelAnswer<>(id, new MemoryReport(WireRecords.memory(use.body()), kernels.launcherName(),
                python == null ? null : python.executable().toString(), python == null ? null : python.version()),
                use.notSaved(), use.stillWriting(), use.lostAtStop(), use.replaced());
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

    private <R> Accepted<R> call(KernelRequest<R> request, String data, Duration timeout, CallContext context) {
        acquire(timeout);
        try {
            return accept(exchange(request, data, timeout, KernelCallbacks.NONE, context));
        } catch (KernelDiedException e) {
            throw kernelError(e, timeout);
        } finally {
            lock.unlock();
        }
    }

    private <R, T> KernelAnswer<T> answer(Accepted<R> accepted, Function<R, T> ours) {
        return new KernelAnswer<>(id, ours.apply(accepted.body()), accepted.notSaved(), accepted.stillWriting(),
                accepted.lostAtStop(), accepted.replaced());
    }

    private <R> KernelReply<R> exchange(KernelRequest<R> request, String data, Duration timeout,
            KernelCallbacks callbacks, CallContext context) throws KernelDiedException {
        lastActive = Instant.now();
        long started = System.nanoTime();
        Kernel k = ready(timeout);
        if (request instanceof KernelRequest.Load load) {
            bindable(k, load.name());
        }
        try {
            return k.call(request, data, left(timeout, started), settings.interruptGrace(), callbacks, context);
        } finally {
            lastActive = Instant.now();
        }
    }

    /** What is left of a call's time limit ({@code timeout}, null: none) since {@code started} (at least 1 ms). */
    private static Duration left(Duration timeout, long started) {
        return timeout == null ? null
                : Duration.ofNanos(Math.max(1_000_000, timeout.toNanos() - (System.nanoTime() - started)));
    }

    /**
     * The kernel for the next call (under the lock), whose time limit is {@code limit}. What earlier
     * steps changed and no snapshot holds is written first, so that this call, however long it runs
     * or if it kills the kernel, cannot hold it back; that write counts against the call's limit, and
     * a kernel that does not finish it within the limit and grace is killed, which ends the call (the
     * caller reports the loss). A kernel that died since the last call is replaced and restored from
     * the snapshot, and the loss is kept for this call's reply: the call then runs.
     */
    private Kernel ready(Duration limit) throws KernelDiedException {
        Kernel current = kernel.current();
        if (snapshots.pending() && store != null && current != null && current.isAlive()) {
            snapshots.take(current, limit == null ? settings.maxTimeout() : limit, settings.interruptGrace());
        }
        if (current != null && !current.isAlive()) {
            replaced = kernelLost(current.death(), null);
        }
        Kernel k = kernel.get();
        List<String> unwritten = kernel.takeUnwritten();
        if (!unwritten.isEmpty()) {
            lostAtStop = unwritten;
        }
        return k;
    }

    /**
     * The kernel, if a load may bind {@code name}: refused before any byte is sent when it is one of
     * the names the kernel's harness reserves (its ready frame lists them).
     */
    private static Kernel bindable(Kernel k, String name) {
        if (k.ready().reserved().contains(name)) {
            throw RlmException.invalid("name", "'" + name + "' is reserved by rlm-mcp",
                    "choose another name; use a Python identifier such as logs or rows_2024");
        }
        return k;
    }

    /** The snapshot is due: taken now, or as soon as the call under way ends. */
    private void snapshotWhenDue() {
        try {
            if (!lock.tryLock(settings.maxTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
                return; // a call has held the session all that time: the next one writes the snapshot first
            }
        } catch (InterruptedException e) {
            return;
        }
        try {
            Kernel k = kernel.current();
            if (store != null && k != null && k.isAlive() && snapshots.isDue()) {
                takeSnapshot(k);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Has the kernel write every variable changed since the last snapshot (under the lock). Returns
     * its reply, or null if there is no kernel or nothing to write.
     */
    private SnapshotWritten snapshot() {
        Kernel k = kernel.current();
        if (store == null || k == null || !k.isAlive() || !snapshots.pending()) {
            return null;
        }
        return takeSnapshot(k);
    }

    private SnapshotWritten takeSnapshot(Kernel k) {
        writingSnapshot = k;
        try {
            return snapshots.take(k, settings.maxTimeout(), settings.interruptGrace());
        } catch (KernelDiedException e) {
            // left in place: the next call finds it dead, replaces it and names what was lost
            log.warn("session {}: the kernel died writing its snapshot ({}); not saved: {}; the next call restores "
                    + "the last snapshot", id, e.getMessage(), String.join(", ", snapshots.unsavedNow("").keySet()));
            return null;
        } finally {
            writingSnapshot = null;
        }
    }

    /** Snapshots now what changed (for tests and benchmarks); the kernel's reply, or null. */
    public SnapshotWritten snapshotNow() {
        lock.lock();
        try {
            return snapshot();
        } finally {
            lock.unlock();
        }
    }

    /** A kernel's answer, accepted under the lock: its body, and what the caller is to be told with it. */
    private record Accepted<R>(R body, List<String> notSaved, List<String> stillWriting, List<String> lostAtStop,
            KernelLoss replaced) {
    }

    /**
     * The kernel's answer, or its refusal thrown. The kernel wrote the call's changes before it
     * answered, but for those too large to write without delaying the reply: they are written now in
     * the background, and those the call reported setting are named in {@code stillWriting}. With
     * durable replies, they are written before the answer is returned instead (what could not be is
     * in {@code notSaved}). A kernel replaced before the call ran, and what a stop of the server had
     * cut short, are handed on to be told.
     */
    private <R> Accepted<R> accept(KernelReply<R> reply) {
        boolean step = snapshots.noteUnsaved(reply.unsaved());
        if (step) {
            switch (reply.body()) {
                case ExecResult exec -> snapshots.noteNotPersisted(
                        java.util.stream.Stream.concat(exec.variablesChanged().stream(), exec.variablesDeleted().stream())
                                .toList(), exec.notPersisted());
                case Loaded loaded -> snapshots.noteNotPersisted(List.of(loaded.name()), null);
                case Cleared cleared -> snapshots.noteNotPersisted(cleared.cleared(), null);
                case null, default -> {
                }
            }
        }
        if (step && durable && snapshots.pending()) {
            snapshot();
        }
        KernelLoss before = replaced;
        replaced = null;
        List<String> lost = lostAtStop;
        lostAtStop = null;
        if (!reply.ok()) {
            throw refusal(reply.refusal());
        }
        List<String> notSaved = step && durable && snapshots.pending()
                ? List.copyOf(snapshots.unsavedNow("").keySet()) : null;
        List<String> stillWriting = null;
        if (step && !durable && snapshots.pending()) {
            List<String> set = reply.body() instanceof ExecResult exec ? exec.variablesChanged()
                    : reply.body() instanceof Loaded loaded ? List.of(loaded.name()) : List.of();
            List<String> writing = set.stream().filter(reply.unsaved()::contains).toList();
            stillWriting = writing.isEmpty() ? null : writing;
        }
        return new Accepted<>(reply.body(), notSaved, stillWriting, lost, before);
    }

    private static RlmException refusal(Refusal refusal) {
        ErrorCode code = ErrorCode.of(refusal.code());
        return new RlmException(code, refusal.message(), refusal.argument(), switch (code) {
            case VARIABLE_NOT_FOUND -> "call rlm_list_vars to see the variables of this session";
            case INVALID_DATA -> "check that data_type matches the data, or load it as text";
            case OUT_OF_MEMORY -> "free memory with rlm_clear, or load a smaller part of the data";
            case INTERRUPTED -> "the load was cancelled or ran past --max-timeout-s; load a smaller part";
            default -> null;
        });
    }

    /** The kernel died during a call that returns no step: the loss, as a refusal. */
    private RlmException kernelError(KernelDiedException e, Duration timeout) {
        return new RlmException(ErrorCode.KERNEL_ERROR, kernelLost(e, timeout).message(), null,
                "if the data is too big for memory, load a smaller part or raise the memory limit");
    }

    /**
     * The kernel died, during a call ({@code timeout} its limit) or, with {@code timeout} null, since
     * the last one: it is replaced, and the loss says what was lost.
     */
    private KernelLoss kernelLost(KernelDiedException e, Duration timeout) {
        memoryBytes = 0;
        seen.forget();
        Set<String> lost = snapshots.lost();
        if (lostAtStop != null) {
            lost.addAll(lostAtStop);
            lostAtStop = null;
        }
        if (replaced != null) {
            // the kernel that replaced one found dead before this call died too: both losses count
            lost.addAll(replaced.lost());
            replaced = null;
        }
        KernelLoss loss = kernel.replace(e, timeout, lost, snapshots.at());
        save();
        return loss;
    }

    public int kernelRestarts() {
        return kernel.restarts();
    }

    /**
     * At shutdown, before any kernel stops: snapshots what changed, waiting until {@code deadline} for
     * a call under way to end. Returns what is not saved, each name with why (empty: everything is).
     */
    Map<String, String> saveBeforeStop(Instant deadline) {
        if (store == null) {
            return Map.of();
        }
        boolean locked;
        try {
            locked = lock.tryLock(Math.max(0, Duration.between(Instant.now(), deadline).toMillis()),
                    java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            locked = false;
        }
        if (!locked) {
            log.warn("session {}: a call was still running at the shutdown deadline; what it changes is not saved", id);
            return snapshots.unsavedNow("changed before a call still running at the shutdown deadline");
        }
        try {
            snapshots.cancel();
            Kernel k = kernel.current();
            boolean dead = k != null && !k.isAlive();
            snapshot();
            return snapshots.unsavedNow(dead ? "the kernel had died" : "the snapshot failed");
        } finally {
            lock.unlock();
        }
    }

    /** What no snapshot holds now (at shutdown, for a snapshot still being written at the deadline). */
    Map<String, String> unsavedNow(String why) {
        return snapshots.unsavedNow(why);
    }

    /**
     * Stops the kernel at shutdown, after {@link #saveBeforeStop}: without waiting for a call still
     * running past the deadline (its kernel is stopped under it).
     */
    void stopKernel() {
        boolean locked = lock.tryLock();
        try {
            snapshots.cancel();
            kernel.close();
        } finally {
            if (locked) {
                lock.unlock();
            }
        }
    }

    /** Stops the kernel, snapshotting first what changed (at shutdown). */
    @Override
    public void close() {
        lock.lock();
        try {
            snapshots.cancel();
            snapshot();
            kernel.close();
        } finally {
            lock.unlock();
        }
    }

    /** Stops the kernel without a snapshot: the session is being deleted. */
    void discard() {
        lock.lock();
        try {
            snapshots.cancel();
            snapshots.forget();
            kernel.close();
        } finally {
            lock.unlock();
        }
    }
}

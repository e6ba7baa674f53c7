package dev.rlmmcp.core;

import dev.rlmmcp.base.Bytes;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.base.Text;
import dev.rlmmcp.data.StreamedLoad;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.kernel.protocol.DataType;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.kernel.channel.Kernel;
import dev.rlmmcp.kernel.channel.KernelCallbacks;
import dev.rlmmcp.kernel.channel.KernelDiedException;
import dev.rlmmcp.data.Download;
import dev.rlmmcp.kernel.channel.KernelReply;
import dev.rlmmcp.llm.LlmAccount;
import dev.rlmmcp.llm.LlmBackend;
import dev.rlmmcp.llm.LlmLimits;
import dev.rlmmcp.llm.LlmService;
import dev.rlmmcp.llm.LlmStep;
import dev.rlmmcp.kernel.channel.TransferAbortedException;
import dev.rlmmcp.store.SessionDatabase.StoredSession;
import dev.rlmmcp.store.StateStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One REPL: a kernel started on first use, and the calls made on it, one at a time, each recorded
 * in the trace and counted against the session's guardrails. A kernel that dies is replaced at
 * once, and the caller is told plainly what was lost.
 *
 * <p>With a {@link StateStore}, the session's record and trace are written to it as they change,
 * and its variables are snapshotted by the kernel into the session's snapshot directory shortly after
 * the steps that changed them (at the latest the store's debounce time after a step's reply, and
 * before the session's next call runs; with durable replies, before the reply), before its kernel is
 * released and at shutdown. A new kernel (after a crash, an idle release or a server restart)
 * restores that snapshot; variables load on first use. A kernel found dead when a call comes is
 * replaced before the call runs, and the call's reply names what was lost.
 */
public final class Session implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Session.class);

    static final int TRACE_KEPT = Trace.KEPT;
    /** Carries a step's sub-LLM calls from its reply body to its trace entry; never sent to the client. */
    private static final String LLM_CALLS = "_llm_calls";
    /** The most callers that may wait on one busy session at once; more are refused at once. */
    static final int MAX_WAITING = 16;

    private final String id;
    private final String name;
    private final KernelFactory kernels;
    private final Settings settings;
    private final Guardrails guardrails;
    private final LlmService llm;
    private final LlmAccount llmAccount;
    private final Instant created;
    private final StateStore store;
    private final ReentrantLock lock = new ReentrantLock();
    private final SessionKernel kernel;
    private final Trace trace;
    private final SeenVariables seen;
    private final Snapshots snapshots;
    /** Snapshot a step's changes before its reply is sent. */
    private final boolean durable;
    /** A kernel death found before the current call ran: told in the call's reply (under the lock). */
    private ObjectNode replaced;
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
        this.trace = new Trace(kernels.json());
        this.seen = new SeenVariables(kernels.json());
        this.snapshots = new Snapshots(id, store, timer, kernels.json(), this::snapshotWhenDue, this::save);
        this.durable = store != null && store.durableReplies();
    }

    /**
     * A new session, written to the store at once if {@code saveNow}, else with its first step (a
     * connection's default session that is never used leaves nothing behind).
     */
    static Session create(String id, String name, Limits limits, KernelFactory kernels, LlmService llm,
            LlmLimits llmLimits, StateStore store, ScheduledExecutorService timer, boolean saveNow) {
        Session session = new Session(id, name, limits, kernels, llm, llmLimits, Instant.now(), store, timer);
        if (saveNow) {
            session.save();
        }
        return session;
    }

    /** A session read back from the store after a restart; its kernel starts, and restores, on first use. */
    static Session restore(StoredSession stored, KernelFactory kernels, LlmService llm, StateStore store,
            ScheduledExecutorService timer) throws IOException {
        SessionRecord r = SessionRecords.read(kernels.json(), stored.id(), stored.record(), llm.defaults());
        Session session = new Session(r.id(), r.name(), r.limits(), kernels, llm, r.llmLimits(), r.created(), store,
                timer);
        session.lastActive = r.lastActive();
        session.state = r.state();
        session.stoppedBy = r.stoppedBy();
        session.finalAnswer = r.finalAnswer();
        session.kernel.restoredRestarts(r.kernelRestarts());
        session.snapshots.restoredAt(r.snapshotAt());
        session.guardrails.restore(r.steps(), r.runtimeMs(), r.ioBytes());
        List<Step> kept = new ArrayList<>();
        for (String entry : stored.trace()) {
            kept.add(SessionRecords.step(kernels.json().readTree(entry)));
        }
        session.trace.restore(kept, r.traceLength());
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

    public Instant lastActive() {
        return lastActive;
    }

    /**
     * Runs code as the session's next step: the reply carries output, the error if the code raised,
     * what happened to the kernel, the step index and the guardrail the step tripped, if any.
     */
    public ObjectNode execute(String code, Duration timeout) {
        return execute(code, timeout, null, KernelCallbacks.NONE, null);
    }

    /**
     * {@link #execute(String, Duration)}, with requests the code makes to the host answered by
     * {@code callbacks}, except llm_query's, which the session answers itself.
     */
    public ObjectNode execute(String code, Duration timeout, KernelCallbacks callbacks) {
        return execute(code, timeout, null, callbacks, null);
    }

    /**
     * Runs code as the session's next step; llm_query calls go to the configured backend, where the
     * calling client's MCP sampling ({@code clientSampling}, null if it has none) may be one; other
     * requests from the code go to {@code callbacks}. What llm_query used is in the reply and trace.
     * {@code context} (or null) is added to the kernel's exec request: what the harness should set up
     * before the code runs, such as the bridged MCP servers ({@code "mcp"}).
     */
    public ObjectNode execute(String code, Duration timeout, LlmBackend clientSampling, KernelCallbacks callbacks,
            ObjectNode context) {
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
            LlmStep llmStep = llm.step(llmAccount, clientSampling);
            ObjectNode body = run(code, limit, (kind, request) -> "llm".equals(kind)
                    ? llmStep.handle(kind, request) : callbacks.handle(kind, request), context);
            double ms = (System.nanoTime() - started) / 1e6;
            ObjectNode llmUsage = llmStep.usage();
            if (llmUsage != null) {
                body.set("llm_usage", llmUsage);
                body.set(LLM_CALLS, llmStep.calls());
            }
            long io = Text.utf8Length(code) + Text.utf8Length(body.path("stdout").asText(""))
                    + Text.utf8Length(body.path("stderr").asText(""));
            int index = guardrails.steps();
            String tripped = guardrails.afterStep(Math.round(ms), io);
            body.put("step", index);
            return settle(index, "exec", code, body, ms, io, tripped);
        } finally {
            lock.unlock();
        }
    }

    private ObjectNode run(String code, Duration timeout, KernelCallbacks callbacks, ObjectNode context) {
        ObjectNode request = request("exec").put("code", code);
        if (context != null) {
            request.setAll(context);
        }
        try {
            KernelReply reply = exchange(request, null, timeout, callbacks);
            JsonNode error = reply.body().path("error");
            boolean interrupted = reply.interrupted() && error.path("interrupted").asBoolean();
            ObjectNode body = checked(reply, interrupted ? "interrupted" : error.isObject() ? "error" : "ok");
            if (interrupted) {
                body.put("message", "interrupted after %.1f s (timeout %s s, or cancelled by the client); all variables are intact"
                        .formatted(reply.interruptedAfterMs() / 1000.0, Text.seconds(timeout)));
            }
            EvictionNote.add(body, settings);
            return body;
        } catch (KernelDiedException e) {
            return kernelLost(e, timeout);
        }
    }

    public ObjectNode loadData(String name, String data, DataType type) {
        ObjectNode request = request("load").put("name", name).put("data_type", type.wireName());
        long io = guardrails.limits().budgetBytes() == null ? data.length() : Text.utf8Length(data);
        return load(request, data, io, "rlm_load_data " + name + " (" + type.wireName() + ")");
    }

    /** Loads a file the caller has already confined to the data root; the kernel reads it itself. */
    public ObjectNode loadFile(String name, Path file, String shownPath, DataType type) {
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
        ObjectNode request = request("load").put("name", name).put("data_type", type.wireName())
                .put("path", file.toString());
        ObjectNode body = load(request, null, size, "rlm_load_file " + name + " <- " + shownPath);
        body.put("path", shownPath);
        body.put("file_bytes", size);
        return body;
    }

    /**
     * Streams a download into a variable: bytes go from the source to the kernel's pipe in bounded
     * chunks as they arrive, never whole in this JVM. A declared size over the memory limit is refused
     * before any byte moves; a stream that passes the limit is cut, and nothing is stored. A failed
     * source leaves the session as it was.
     */
    public ObjectNode loadStream(String name, DataType type, Download download, String argument, String what) {
        StreamedLoad stream = StreamedLoad.of(download, settings.memoryLimitBytes(), argument);
        ObjectNode request = request("load").put("name", name).put("data_type", type.wireName());
        acquire(settings.maxTimeout());
        try (download) {
            requireOpen();
            long started = System.nanoTime();
            ObjectNode body0;
            try {
                lastActive = Instant.now();
                KernelReply reply = ready().callStreaming(request, stream.body(), settings.maxTimeout(),
                        settings.interruptGrace());
                body0 = checked(reply, null);
                EvictionNote.add(body0, settings);
            } catch (KernelDiedException e) {
                throw kernelError(e, settings.maxTimeout());
            } catch (TransferAbortedException e) {
                throw stream.failed(e.getCause());
            } finally {
                lastActive = Instant.now();
            }
            double ms = (System.nanoTime() - started) / 1e6;
            stream.describe(body0, ms);
            long sent = stream.sent();
            return settle(null, "load", what, body0, ms, sent, guardrails.afterLoad(sent));
        } finally {
            lock.unlock();
        }
    }

    private ObjectNode load(ObjectNode request, String data, long ioBytes, String what) {
        acquire(settings.maxTimeout());
        try {
            requireOpen();
            long started = System.nanoTime();
            ObjectNode body = call(request, data, settings.maxTimeout(), true);
            double ms = (System.nanoTime() - started) / 1e6;
            return settle(null, "load", what, body, ms, ioBytes, guardrails.afterLoad(ioBytes));
        } finally {
            lock.unlock();
        }
    }

    /** One page of a variable's value, rendered for a model (the text itself, JSON, or repr). */
    public ObjectNode getVar(String name, long offset, long maxChars) {
        return call(request("get").put("name", name).put("offset", offset).put("max_chars", maxChars), null,
                settings.defaultTimeout(), false);
    }

    /**
     * Closes the session with its final answer, given as text or as the name of a variable whose
     * rendered value is the answer. Later steps are refused; the answer stays readable.
     */
    public ObjectNode finish(String finalText, String finalVariable) {
        acquire(settings.defaultTimeout());
        try {
            if (state != SessionState.STOPPED) {
                requireOpen();
            }
            String answer = finalText;
            if (answer == null) {
                ObjectNode page = getVar(finalVariable, 0, Integer.MAX_VALUE - 8);
                answer = page.path("value").asText();
            }
            finalAnswer = answer;
            state = SessionState.FINALIZED;
            lastActive = Instant.now();
            save();
            ObjectNode body = summary();
            record(null, "finalize", finalText != null ? "final_text" : "final_var_name " + finalVariable, body, 0,
                    0, null);
            body.put("final_answer", answer);
            return body;
        } finally {
            lock.unlock();
        }
    }

    /** Trace entries [start, end), with the session's totals. */
    public ObjectNode trace(int start, int end) {
        ObjectNode body = summary();
        trace.slice(body, start, end);
        if (finalAnswer != null) {
            body.put("final_answer", finalAnswer);
        }
        return body;
    }

    /** What rlm_sessions shows of a session: no kernel call, so listing never waits on running code. */
    public ObjectNode summary() {
        return SessionSummary.of(kernels.json(), stored(snapshots.at()), llmAccount.calls(), llmAccount.tokens(),
                memoryBytes, hasKernel(), store != null, snapshots.last(), settings.defaultTimeout());
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
        if (!lock.tryLock()) {
            return false;
        }
        try {
            if (store != null) {
                Kernel current = kernel.current();
                if (current == null || !current.isAlive()) {
                    // a dead kernel stays, so that the next call replaces it and names what was lost
                    return false;
                }
                snapshot();
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

    /**
     * Gives up an idle kernel to make room for another session's (as {@link #expire} does with a
     * store: a snapshot first, the variables back on the next call). False without a store, whose
     * variables would be lost, or if a call is running or there is no kernel.
     */
    boolean releaseIdle() {
        return store != null && expire();
    }

    /** Notes a finished step or load: the guardrail it tripped, the memory it left, its trace entry. */
    private ObjectNode settle(Integer step, String kind, String input, ObjectNode body, double ms, long io,
            String tripped) {
        if (tripped != null) {
            stop(tripped);
            body.put("guardrail_stop", tripped);
            body.put("guardrail_message", guardrails.stopMessage(id, tripped) + " This "
                    + (step == null ? "load" : "step") + " was done; further steps are refused.");
        }
        memoryBytes = body.path("memory").path("total_bytes").asLong(memoryBytes);
        record(step, kind, input, body, ms, io, tripped);
        return body;
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

    private void record(Integer step, String kind, String input, ObjectNode body, double ms, long io, String tripped) {
        JsonNode llmCalls = body.remove(LLM_CALLS);
        Step entry = trace.append(step, kind, input, body, ms, io, tripped, memoryBytes, llmCalls);
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

    public ObjectNode listVars() {
        ObjectNode body = call(request("vars"), null, settings.defaultTimeout(), false);
        seen.see(body.path("variables"));
        return body;
    }

    /**
     * The variables for someone watching, not working: asked of the kernel only when one is running
     * and idle, otherwise the list as last seen (or the names the trace knows). Never starts a
     * kernel, never waits for running code, never counts as activity.
     */
    public ObjectNode variablesView() {
        ObjectNode body = kernels.json().createObjectNode();
        body.put("session_id", id);
        boolean running = hasKernel();
        boolean asked = false;
        if (running && lock.tryLock()) {
            try {
                Kernel k = kernel.current();
                if (k != null && k.isAlive()) {
                    KernelReply reply = k.call(request("vars"), null, settings.defaultTimeout(), settings.interruptGrace());
                    if (reply.ok()) {
                        seen.see(reply.body().path("variables"));
                        asked = true;
                    }
                }
            } catch (KernelDiedException e) {
                // the session's next call finds the dead kernel and reports the loss
            } finally {
                lock.unlock();
            }
        }
        seen.describe(body, running, asked, trace);
        return body;
    }

    /**
     * Whether the session may hold variables, found out without starting a kernel or waiting on
     * running code: an idle kernel is asked; otherwise what it was last seen holding, the names its
     * steps made, its memory and its snapshot count, so that a doubt keeps the session.
     */
    public boolean holdsVariables() {
        ObjectNode view = variablesView();
        boolean listed = !view.path("variables").isEmpty();
        if ("kernel".equals(view.path("source").asText())) {
            return listed;
        }
        return listed || memoryBytes > 0 || snapshots.at() != null;
    }

    /**
     * Takes the session's lock for a call whose own time limit is {@code timeout}: a caller never
     * waits on another call (or a snapshot) longer than that, plus the grace, and no more than
     * {@link #MAX_WAITING} callers wait at once, so that calls piling up on one busy session tie up
     * neither threads nor time without end. Either way the caller gets a TIMEOUT saying why.
     */
    private void acquire(Duration timeout) {
        if (lock.isHeldByCurrentThread()) {
            lock.lock();
            return;
        }
        if (lock.getQueueLength() >= MAX_WAITING) {
            throw busy("%d calls are already waiting for it".formatted(lock.getQueueLength()));
        }
        Duration wait = (timeout == null ? settings.maxTimeout() : timeout).plus(settings.interruptGrace());
        boolean locked;
        try {
            locked = lock.tryLock(wait.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            locked = false;
        }
        if (!locked) {
            throw busy("this call waited %s s, its own time limit, for the call under way to end"
                    .formatted(Text.seconds(wait)));
        }
    }

    private RlmException busy(String why) {
        return new RlmException(ErrorCode.TIMEOUT, "session " + id + " is busy with another call (or its snapshot): "
                + why + "; this call did not run", "session_id",
                "retry when the running call has ended (rlm_sessions shows it as busy), or use another session");
    }

    /** Whether a call is running on this session now. */
    public boolean busy() {
        return lock.isLocked();
    }

    public ObjectNode varInfo(String name) {
        return call(request("var_info").put("name", name), null, settings.defaultTimeout(), false);
    }

    public ObjectNode clear(String name) {
        return call(request("clear").put("name", name), null, settings.defaultTimeout(), false);
    }

    public ObjectNode clearAll() {
        return call(request("clear").put("all", true), null, settings.defaultTimeout(), false);
    }

    public ObjectNode memory() {
        ObjectNode body = call(request("memory"), null, settings.defaultTimeout(), false);
        body.put("sandbox", kernels.launcherName());
        var python = kernels.pythonIfKnown();
        if (python != null) {
            body.put("python", python.executable().toString());
            body.put("python_version", python.version());
        }
        return body;
    }

    /** Whether a kernel process is running for this session now. */
    public boolean hasKernel() {
        return kernel.running();
    }

    private ObjectNode call(ObjectNode request, String data, Duration timeout, boolean mayEvict) {
        acquire(timeout);
        try {
            ObjectNode body = checked(exchange(request, data, timeout, KernelCallbacks.NONE), null);
            if (mayEvict) {
                EvictionNote.add(body, settings);
            }
            return body;
        } catch (KernelDiedException e) {
            throw kernelError(e, timeout);
        } finally {
            lock.unlock();
        }
    }

    private KernelReply exchange(ObjectNode request, String data, Duration timeout, KernelCallbacks callbacks)
            throws KernelDiedException {
        lastActive = Instant.now();
        Kernel k = ready();
        try {
            return k.call(request, data, timeout, settings.interruptGrace(), callbacks);
        } finally {
            lastActive = Instant.now();
        }
    }

    /**
     * The kernel for the next call (under the lock). What earlier steps changed and no snapshot holds
     * is written first, so that this call, however long it runs or if it kills the kernel, cannot
     * hold it back. A kernel that died since the last call is replaced and restored from the
     * snapshot, and the loss is kept for this call's reply: the call then runs.
     */
    private Kernel ready() {
        if (snapshots.pending()) {
            snapshot();
        }
        Kernel current = kernel.current();
        if (current != null && !current.isAlive()) {
            ObjectNode note = kernelLost(current.death(), null);
            note.remove("status");
            note.remove("session_id");
            replaced = note;
        }
        return kernel.get();
    }

    /** The snapshot is due: taken now, or as soon as the call under way ends. */
    private void snapshotWhenDue() {
        try {
            if (!lock.tryLock(settings.maxTimeout().toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
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
    private ObjectNode snapshot() {
        Kernel k = kernel.current();
        if (store == null || k == null || !k.isAlive() || !snapshots.pending()) {
            return null;
        }
        return takeSnapshot(k);
    }

    private ObjectNode takeSnapshot(Kernel k) {
        try {
            return snapshots.take(k, settings.maxTimeout(), settings.interruptGrace());
        } catch (KernelDiedException e) {
            // left in place: the next call finds it dead, replaces it and names what was lost
            log.warn("session {}: the kernel died writing its snapshot ({}); not saved: {}; the next call restores "
                    + "the last snapshot", id, e.getMessage(), String.join(", ", snapshots.unsavedNow("").keySet()));
            return null;
        }
    }

    /** Snapshots now what changed (for tests, benchmarks and eviction); the kernel's reply, or null. */
    public ObjectNode snapshotNow() {
        lock.lock();
        try {
            return snapshot();
        } finally {
            lock.unlock();
        }
    }

    /**
     * The kernel's reply as the agent sees it (status and session first), or its refusal thrown. With
     * durable replies, a step's changes are snapshotted before it is returned; a kernel replaced before
     * the call ran is told here.
     */
    private ObjectNode checked(KernelReply reply, String status) {
        boolean step = snapshots.noteUnsaved(reply.body());
        if (step && durable && snapshots.pending()) {
            snapshot();
        }
        ObjectNode body = KernelReplies.shown(kernels.json(), id, reply, status);
        if (step && durable && snapshots.pending()) {
            body.set("not_saved", kernels.json().valueToTree(List.copyOf(snapshots.unsavedNow("").keySet())));
        }
        if (replaced != null) {
            if (replaced.has("lost_variables")) {
                body.set("lost_variables", replaced.get("lost_variables"));
            }
            body.set("kernel_restarted", replaced);
            replaced = null;
        }
        return body;
    }

    /** The kernel died during a call that returns no step: the loss, as a refusal. */
    private RlmException kernelError(KernelDiedException e, Duration timeout) {
        return new RlmException(ErrorCode.KERNEL_ERROR, kernelLost(e, timeout).path("message").asText(), null,
                "if the data is too big for memory, load a smaller part or raise the memory limit");
    }

    /**
     * The kernel died, during a call ({@code timeout} its limit) or, with {@code timeout} null, since
     * the last one: it is replaced, and the body says what was lost.
     */
    private ObjectNode kernelLost(KernelDiedException e, Duration timeout) {
        memoryBytes = 0;
        seen.forget();
        java.util.Set<String> lost = snapshots.lost();
        if (replaced != null) {
            // the kernel that replaced one found dead before this call died too: both losses count
            replaced.path("lost_variables").forEach(n -> lost.add(n.asText()));
            replaced = null;
        }
        ObjectNode body = kernel.replace(e, timeout, lost, snapshots.at());
        save();
        return body;
    }

    private ObjectNode request(String op) {
        return kernels.json().createObjectNode().put("op", op);
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

package dev.rlmmcp.core;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.kernel.Kernel;
import dev.rlmmcp.core.kernel.KernelCallbacks;
import dev.rlmmcp.core.kernel.KernelDiedException;
import dev.rlmmcp.core.data.CappedInputStream;
import dev.rlmmcp.core.data.Download;
import dev.rlmmcp.core.data.MeteredInputStream;
import dev.rlmmcp.core.data.TransferException;
import dev.rlmmcp.core.kernel.KernelReply;
import dev.rlmmcp.core.llm.LlmAccount;
import dev.rlmmcp.core.llm.LlmBackend;
import dev.rlmmcp.core.llm.LlmLimits;
import dev.rlmmcp.core.llm.LlmService;
import dev.rlmmcp.core.llm.LlmStep;
import dev.rlmmcp.core.kernel.TransferAbortedException;
import dev.rlmmcp.core.store.SessionDatabase.StoredSession;
import dev.rlmmcp.core.store.StateStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
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
 * the steps that changed them, before its kernel is released and at shutdown. A new kernel (after a
 * crash, an idle release or a server restart) restores that snapshot; variables load on first use.
 */
public final class Session implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Session.class);

    private static final int TRACE_TEXT = 2000;
    static final int TRACE_KEPT = dev.rlmmcp.core.store.SessionDatabase.TRACE_KEPT;
    /** Carries a step's sub-LLM calls from its reply body to its trace entry; never sent to the client. */
    private static final String LLM_CALLS = "_llm_calls";

    private final String id;
    private final String name;
    private final KernelFactory kernels;
    private final Settings settings;
    private final Guardrails guardrails;
    private final LlmService llm;
    private final LlmAccount llmAccount;
    private final Instant created;
    private final StateStore store;
    private final ScheduledExecutorService timer;
    private final ReentrantLock lock = new ReentrantLock();
    private final Deque<Step> trace = new ArrayDeque<>();
    private int traceLength;
    private volatile Instant lastActive;
    private volatile SessionState state = SessionState.ACTIVE;
    private volatile String stoppedBy;
    private volatile long memoryBytes;
    private volatile String finalAnswer;
    private volatile JsonNode variablesSeen;
    private volatile Instant variablesSeenAt;
    private Kernel kernel;
    private int kernelRestarts;
    /** Variables changed since the last snapshot, and those the last snapshot could not hold. */
    private Set<String> unsaved = Set.of();
    private Set<String> notPersisted = Set.of();
    private volatile Instant snapshotAt;
    private volatile ObjectNode lastSnapshot;
    private ObjectNode restored;
    private ScheduledFuture<?> snapshotDue;

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
        this.timer = timer;
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
        JsonNode r = kernels.json().readTree(stored.record());
        JsonNode l = r.path("limits");
        Limits limits = new Limits(l.path("max_steps").isNumber() ? l.path("max_steps").asInt() : null,
                l.path("max_runtime_ms").isNumber() ? l.path("max_runtime_ms").asLong() : null,
                l.path("budget_bytes").isNumber() ? l.path("budget_bytes").asLong() : null,
                l.path("step_timeout_ms").isNumber() ? Duration.ofMillis(l.path("step_timeout_ms").asLong()) : null);
        Session session = new Session(stored.id(), r.path("name").asText("default"), limits, kernels, llm,
                llmLimits(r.path("llm_limits"), llm.defaults()), Instant.parse(r.path("created").asText()), store, timer);
        session.lastActive = Instant.parse(r.path("last_active").asText());
        session.state = SessionState.valueOf(r.path("state").asText("ACTIVE"));
        session.stoppedBy = r.path("guardrail_stop").isTextual() ? r.path("guardrail_stop").asText() : null;
        session.finalAnswer = r.path("final_answer").isTextual() ? r.path("final_answer").asText() : null;
        session.kernelRestarts = r.path("kernel_restarts").asInt();
        session.snapshotAt = r.path("snapshot_at").isTextual() ? Instant.parse(r.path("snapshot_at").asText()) : null;
        session.guardrails.restore(r.path("steps").asInt(), r.path("runtime_ms").asLong(), r.path("io_bytes").asLong());
        for (String entry : stored.trace()) {
            session.trace.addLast(stepOf(kernels.json().readTree(entry)));
        }
        session.traceLength = Math.max(r.path("trace_length").asInt(),
                session.trace.isEmpty() ? 0 : session.trace.getLast().index() + 1);
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
        lock.lock();
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
                        .formatted(reply.interruptedAfterMs() / 1000.0, seconds(timeout)));
            }
            describeEvictions(body);
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
        long size = download.size();
        long limit = settings.memoryLimitBytes();
        if (limit > 0 && size > limit) {
            download.close();
            throw new RlmException(ErrorCode.TOO_LARGE, "%s is %s, more than this session's memory limit of %s"
                    .formatted(download.shown(), Bytes.human(size), Bytes.human(limit)), argument,
                    "load a smaller object, or raise RLM_MAX_MEMORY_MB / --max-memory-mb");
        }
        String label = "loading " + download.shown();
        MeteredInputStream metered = new MeteredInputStream(download.body(),
                bytes -> Progress.transferred(label, bytes, size));
        InputStream body = limit <= 0 ? metered : new CappedInputStream(metered, limit,
                cap -> new TransferException(ErrorCode.TOO_LARGE, "%s sent more than this session's memory limit of %s"
                        .formatted(download.shown(), Bytes.human(cap)), argument,
                        "load a smaller object, or raise RLM_MAX_MEMORY_MB / --max-memory-mb"));
        ObjectNode request = request("load").put("name", name).put("data_type", type.wireName());
        lock.lock();
        try (download) {
            requireOpen();
            long started = System.nanoTime();
            ObjectNode body0;
            try {
                lastActive = Instant.now();
                if (kernel == null) {
                    kernel = startKernel();
                }
                KernelReply reply = kernel.callStreaming(request, body, settings.maxTimeout(), settings.interruptGrace());
                body0 = checked(reply, null);
                describeEvictions(body0);
            } catch (KernelDiedException e) {
                ObjectNode lost = kernelLost(e, settings.maxTimeout());
                throw new RlmException(ErrorCode.KERNEL_ERROR, lost.path("message").asText(), null,
                        "if the data is too big for memory, load a smaller part or raise the memory limit");
            } catch (TransferAbortedException e) {
                throw transferFailed(e.getCause(), download.shown(), metered.total(), argument);
            } finally {
                lastActive = Instant.now();
            }
            double ms = (System.nanoTime() - started) / 1e6;
            long sent = metered.total();
            body0.put("source", download.shown());
            body0.put("source_bytes", sent);
            body0.put("transfer_ms", Math.round(ms * 1000) / 1000.0);
            body0.put("mb_per_s", ms <= 0 ? 0 : Math.round(sent / 1e6 / (ms / 1000) * 10) / 10.0);
            return settle(null, "load", what, body0, ms, sent, guardrails.afterLoad(sent));
        } finally {
            lock.unlock();
        }
    }

    private static RlmException transferFailed(IOException cause, String shown, long sent, String argument) {
        if (cause instanceof TransferException t) {
            return t.refusal();
        }
        if (cause instanceof java.io.InterruptedIOException && !(cause instanceof java.net.SocketTimeoutException)) {
            return new RlmException(ErrorCode.INTERRUPTED, "loading " + shown + " stopped after " + Bytes.human(sent)
                    + ": " + cause.getMessage() + "; nothing was stored", argument,
                    "the load was cancelled or ran past --max-timeout-s; load a smaller object or raise the limit");
        }
        if (cause instanceof java.net.SocketTimeoutException) {
            return new RlmException(ErrorCode.TIMEOUT, shown + " stopped sending after " + Bytes.human(sent)
                    + " (read timed out); nothing was stored", argument, "retry, or raise --url-timeout-s");
        }
        return new RlmException(ErrorCode.UPSTREAM_ERROR, "reading " + shown + " failed after " + Bytes.human(sent)
                + ": " + cause.getMessage() + "; nothing was stored", argument, "retry; check that the source is up");
    }

    private ObjectNode load(ObjectNode request, String data, long ioBytes, String what) {
        lock.lock();
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
        lock.lock();
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
        synchronized (trace) {
            ObjectNode body = summary();
            int first = traceLength - trace.size();
            int from = Math.min(Math.max(first, start), traceLength);
            int to = Math.min(Math.max(from, end), traceLength);
            body.put("trace_length", traceLength);
            if (first > 0) {
                body.put("trace_dropped", first);
                body.put("trace_note", "only the last " + TRACE_KEPT + " entries are kept; entries before "
                        + first + " were dropped");
            }
            body.put("start", from);
            body.put("end", to);
            body.set("steps", kernels.json().valueToTree(trace.stream().skip(from - first).limit(to - from)
                    .map(Session::view).toList()));
            if (finalAnswer != null) {
                body.put("final_answer", finalAnswer);
            }
            return body;
        }
    }

    /** What rlm_sessions shows of a session: no kernel call, so listing never waits on running code. */
    public ObjectNode summary() {
        ObjectNode body = kernels.json().createObjectNode();
        body.put("session_id", id);
        body.put("name", name);
        body.put("state", state.wireName());
        if (stoppedBy != null) {
            body.put("guardrail_stop", stoppedBy);
        }
        body.put("steps", guardrails.steps());
        body.put("runtime_ms", guardrails.runtimeMs());
        body.put("io_bytes", guardrails.ioBytes());
        body.put("llm_calls", llmAccount.calls());
        body.put("llm_tokens", llmAccount.tokens());
        body.put("memory_bytes", memoryBytes);
        body.put("memory_human", Bytes.human(memoryBytes));
        body.put("kernel_running", hasKernel());
        if (store != null) {
            body.put("snapshot_at", snapshotAt == null ? null : snapshotAt.toString());
            if (lastSnapshot != null) {
                body.set("last_snapshot", lastSnapshot);
            }
        }
        body.put("created", created.toString());
        body.put("last_active", lastActive.toString());
        body.set("limits", limitsView());
        return body;
    }

    private ObjectNode limitsView() {
        Limits limits = guardrails.limits();
        ObjectNode view = kernels.json().createObjectNode();
        view.put("max_steps", limits.maxSteps());
        view.put("max_runtime_ms", limits.maxRuntimeMs());
        view.put("budget_limit", limits.budgetBytes());
        view.put("timeout_s", (limits.stepTimeout() == null ? settings.defaultTimeout() : limits.stepTimeout()).toSeconds());
        LlmLimits llmLimits = llmAccount.limits();
        view.put("llm_max_calls", llmLimits.maxCalls());
        view.put("llm_max_calls_per_step", llmLimits.maxCallsPerStep());
        view.put("llm_max_concurrency", llmLimits.maxConcurrent());
        view.put("llm_max_prompt_chars", llmLimits.maxPromptChars());
        view.put("llm_token_budget", llmLimits.tokenBudget());
        view.put("llm_timeout_s", llmLimits.callTimeout().toSeconds());
        view.put("llm_max_depth", llmLimits.maxDepth());
        return view;
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
                if (kernel == null) {
                    return false;
                }
                snapshot();
                kernel.close();
                kernel = null;
                memoryBytes = 0;
                save();
                return true;
            }
            if (kernel != null) {
                kernel.close();
                kernel = null;
            }
            if (state != SessionState.FINALIZED) {
                state = SessionState.EXPIRED;
            }
            memoryBytes = 0;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Notes a finished step or load: the guardrail it tripped, the memory it left, its trace entry. */
    private ObjectNode settle(Integer step, String kind, String input, ObjectNode body, double ms, long io,
            String tripped) {
        if (tripped != null) {
            stop(tripped);
            body.put("guardrail_stop", tripped);
            body.put("guardrail_message", stopMessage(tripped) + " This " + (step == null ? "load" : "step")
                    + " was done; further steps are refused.");
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
        return new RlmException(ErrorCode.GUARDRAIL_STOP, stopMessage(guardrail), "session_id",
                "finalize with rlm_finalize (final_text or final_var_name), or start a new session with higher limits");
    }

    private String stopMessage(String guardrail) {
        Limits limits = guardrails.limits();
        return switch (guardrail) {
            case Guardrails.MAX_STEPS -> "session " + id + " reached max_steps (" + limits.maxSteps() + ").";
            case Guardrails.TIMEOUT -> "session " + id + " used its max_runtime_ms (" + limits.maxRuntimeMs()
                    + " ms; used " + guardrails.runtimeMs() + " ms).";
            default -> "session " + id + " spent its budget_limit (" + limits.budgetBytes() + " bytes of I/O; used "
                    + guardrails.ioBytes() + ").";
        };
    }

    private void record(Integer step, String kind, String input, ObjectNode body, double ms, long io, String tripped) {
        List<String> changed = new ArrayList<>();
        body.path("variables_changed").forEach(v -> changed.add(v.asText()));
        if (body.has("name") && "load".equals(kind)) {
            changed.add(body.path("name").asText());
        }
        String status = body.path("status").asText(kind.equals("exec") ? "ok" : "done");
        Step entry = new Step(traceLength, step, kind, Instant.now(), Text.clip(input, TRACE_TEXT), status,
                Text.clip(outputSummary(body), TRACE_TEXT), List.copyOf(changed), Math.round(ms * 1000) / 1000.0,
                io, tripped, memoryBytes, body.get("llm_usage"), body.remove(LLM_CALLS));
        synchronized (trace) {
            if (trace.size() == TRACE_KEPT) {
                trace.removeFirst();
            }
            trace.addLast(entry);
            traceLength++;
        }
        if (store != null) {
            try {
                String stored = kernels.json().writeValueAsString(view(entry));
                String record = record();
                store.write("step " + entry.index() + " of session " + id,
                        db -> db.append(id, record, entry.index(), stored, TRACE_KEPT));
            } catch (IOException e) {
                log.warn("session {}: step {} not written to the state store: {}", id, entry.index(), e.getMessage());
            }
        }
    }

    /** The session's record as stored: everything but the trace and the variables. */
    private String record() throws IOException {
        return record(snapshotAt);
    }

    private String record(Instant snapshotAt) throws IOException {
        ObjectNode r = kernels.json().createObjectNode();
        r.put("id", id);
        r.put("name", name);
        r.put("created", created.toString());
        r.put("last_active", lastActive.toString());
        r.put("state", state.name());
        r.put("guardrail_stop", stoppedBy);
        r.put("final_answer", finalAnswer);
        r.put("steps", guardrails.steps());
        r.put("runtime_ms", guardrails.runtimeMs());
        r.put("io_bytes", guardrails.ioBytes());
        r.put("trace_length", traceLength);
        r.put("kernel_restarts", kernelRestarts);
        r.put("snapshot_at", snapshotAt == null ? null : snapshotAt.toString());
        Limits limits = guardrails.limits();
        ObjectNode l = r.putObject("limits");
        l.put("max_steps", limits.maxSteps());
        l.put("max_runtime_ms", limits.maxRuntimeMs());
        l.put("budget_bytes", limits.budgetBytes());
        l.put("step_timeout_ms", limits.stepTimeout() == null ? null : limits.stepTimeout().toMillis());
        LlmLimits ll = llmAccount.limits();
        ObjectNode lm = r.putObject("llm_limits");
        lm.put("max_calls_per_step", ll.maxCallsPerStep());
        lm.put("max_calls", ll.maxCalls());
        lm.put("max_concurrent", ll.maxConcurrent());
        lm.put("max_prompt_chars", ll.maxPromptChars());
        lm.put("token_budget", ll.tokenBudget());
        lm.put("call_timeout_ms", ll.callTimeout().toMillis());
        lm.put("max_depth", ll.maxDepth());
        return kernels.json().writeValueAsString(r);
    }

    private void save() {
        save(snapshotAt);
    }

    private void save(Instant snapshotAt) {
        if (store == null) {
            return;
        }
        try {
            String record = record(snapshotAt);
            store.write("session " + id, db -> db.save(id, record));
        } catch (IOException e) {
            log.warn("session {} not written to the state store: {}", id, e.getMessage());
        }
    }

    private static Step stepOf(JsonNode v) {
        List<String> changed = new ArrayList<>();
        v.path("variables_changed").forEach(n -> changed.add(n.asText()));
        return new Step(v.path("index").asInt(), v.path("step").isNumber() ? v.path("step").asInt() : null,
                v.path("kind").asText(), Instant.parse(v.path("at").asText()), v.path("input").asText(),
                v.path("status").asText(), v.path("output").asText(), List.copyOf(changed),
                v.path("duration_ms").asDouble(), v.path("io_bytes").asLong(),
                v.path("guardrail_stop").isTextual() ? v.path("guardrail_stop").asText() : null,
                v.path("memory_bytes").asLong(), v.get("llm_usage"), v.get("llm_calls"));
    }

    /** Limits on sub-LLM calls as stored (older records have none: the defaults). */
    private static LlmLimits llmLimits(JsonNode l, LlmLimits defaults) {
        if (!l.isObject()) {
            return defaults;
        }
        return new LlmLimits(l.path("max_calls_per_step").isNumber() ? l.path("max_calls_per_step").asInt() : null,
                l.path("max_calls").isNumber() ? l.path("max_calls").asInt() : null,
                l.path("max_concurrent").asInt(defaults.maxConcurrent()),
                l.path("max_prompt_chars").asInt(defaults.maxPromptChars()),
                l.path("token_budget").isNumber() ? l.path("token_budget").asLong() : null,
                l.path("call_timeout_ms").isNumber() ? Duration.ofMillis(l.path("call_timeout_ms").asLong())
                        : defaults.callTimeout(),
                l.path("max_depth").asInt(defaults.maxDepth()));
    }

    private static String outputSummary(ObjectNode body) {
        StringBuilder out = new StringBuilder(body.path("stdout").asText(""));
        JsonNode error = body.path("error");
        if (error.isObject()) {
            out.append(out.isEmpty() ? "" : "\n").append(error.path("type").asText()).append(": ")
                    .append(error.path("message").asText());
        }
        if (body.has("message")) {
            out.append(out.isEmpty() ? "" : "\n").append(body.path("message").asText());
        }
        if (out.isEmpty() && body.has("type")) {
            out.append(body.path("type").asText()).append(", ").append(body.path("size_human").asText());
        }
        return out.toString();
    }

    private static Object view(Step step) {
        java.util.Map<String, Object> view = new java.util.LinkedHashMap<>();
        view.put("index", step.index());
        if (step.step() != null) {
            view.put("step", step.step());
        }
        view.put("kind", step.kind());
        view.put("at", step.at().toString());
        view.put("input", step.input());
        view.put("status", step.status());
        view.put("output", step.output());
        view.put("variables_changed", step.variablesChanged());
        view.put("duration_ms", step.durationMs());
        view.put("io_bytes", step.ioBytes());
        if (step.guardrail() != null) {
            view.put("guardrail_stop", step.guardrail());
        }
        view.put("memory_bytes", step.memoryBytes());
        if (step.llmUsage() != null) {
            view.put("llm_usage", step.llmUsage());
        }
        if (step.llmCalls() != null) {
            view.put("llm_calls", step.llmCalls());
        }
        return view;
    }

    public ObjectNode listVars() {
        ObjectNode body = call(request("vars"), null, settings.defaultTimeout(), false);
        seeVariables(body.path("variables"));
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
                Kernel k = kernel;
                if (k != null && k.isAlive()) {
                    KernelReply reply = k.call(request("vars"), null, settings.defaultTimeout(), settings.interruptGrace());
                    if (reply.ok()) {
                        seeVariables(reply.body().path("variables"));
                        asked = true;
                    }
                }
            } catch (KernelDiedException e) {
                // the session's next call finds the dead kernel and reports the loss
            } finally {
                lock.unlock();
            }
        }
        body.put("kernel_running", running);
        body.put("source", asked ? "kernel" : variablesSeen != null ? "last_seen" : "trace");
        if (!asked) {
            body.put("note", !running ? "the kernel is not running; shown as last known, values are not loaded"
                    : "code is running; shown as last seen");
        }
        if (variablesSeenAt != null) {
            body.put("as_of", variablesSeenAt.toString());
        }
        body.set("variables", variablesSeen != null ? variablesSeen : namesFromTrace());
        return body;
    }

    /** Whether a call is running on this session now. */
    public boolean busy() {
        return lock.isLocked();
    }

    private void seeVariables(JsonNode variables) {
        if (variables.isArray()) {
            variablesSeen = variables;
            variablesSeenAt = Instant.now();
        }
    }

    private JsonNode namesFromTrace() {
        Set<String> names = new LinkedHashSet<>();
        synchronized (trace) {
            trace.forEach(s -> names.addAll(s.variablesChanged()));
        }
        ArrayNode list = kernels.json().createArrayNode();
        names.forEach(n -> list.addObject().put("name", n));
        return list;
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
        return body;
    }

    /** Whether a kernel process is running for this session now. */
    public boolean hasKernel() {
        Kernel k = kernel;
        return k != null && k.isAlive();
    }

    private ObjectNode call(ObjectNode request, String data, Duration timeout, boolean mayEvict) {
        lock.lock();
        try {
            ObjectNode body = checked(exchange(request, data, timeout, KernelCallbacks.NONE), null);
            if (mayEvict) {
                describeEvictions(body);
            }
            return body;
        } catch (KernelDiedException e) {
            ObjectNode lost = kernelLost(e, timeout);
            throw new RlmException(ErrorCode.KERNEL_ERROR, lost.path("message").asText(), null,
                    "if the data is too big for memory, load a smaller part or raise the memory limit");
        } finally {
            lock.unlock();
        }
    }

    private KernelReply exchange(ObjectNode request, String data, Duration timeout, KernelCallbacks callbacks)
            throws KernelDiedException {
        lastActive = Instant.now();
        if (kernel == null) {
            kernel = startKernel();
        }
        try {
            return kernel.call(request, data, timeout, settings.interruptGrace(), callbacks);
        } finally {
            lastActive = Instant.now();
        }
    }

    /**
     * A kernel for this session: with a store, one that may write the session's snapshot directory
     * and has restored the snapshot there (functions, classes and imports at once, other variables
     * when first used). {@code restored} keeps the kernel's account of the restore.
     */
    private Kernel startKernel() {
        if (store == null) {
            return kernels.start(id);
        }
        Path dir;
        try {
            dir = store.snapshots().checkout(id);
        } catch (IOException e) {
            throw new RlmException(ErrorCode.KERNEL_UNAVAILABLE, "cannot prepare the snapshot of session " + id
                    + ": " + e.getMessage(), null, "check that the state directory is writable");
        }
        Kernel fresh = kernels.start(id, dir, store.directory());
        try {
            KernelReply reply = fresh.call(request("restore").put("dir", kernels.writableDirInside(dir).toString()),
                    null, settings.maxTimeout(),
                    settings.interruptGrace());
            if (!reply.ok()) {
                log.warn("session {}: snapshot not restored: {}", id, reply.body().path("message").asText());
            }
            restored = reply.body();
        } catch (KernelDiedException e) {
            fresh.close();
            throw new RlmException(ErrorCode.KERNEL_UNAVAILABLE, "the kernel died restoring session " + id
                    + "'s snapshot: " + e.getMessage(), null, "the snapshot may be too large for the memory limit");
        }
        return fresh;
    }

    /** After a step that changed variables: a snapshot once no further step has come for the debounce time. */
    private synchronized void snapshotLater() {
        if (store == null || timer == null || unsaved.isEmpty()) {
            return;
        }
        if (snapshotDue != null) {
            snapshotDue.cancel(false);
        }
        try {
            snapshotDue = timer.schedule(() -> Thread.ofVirtual().name("snapshot-" + id).start(this::snapshotWhenIdle),
                    store.snapshotDebounce().toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException shuttingDown) {
            // the server is stopping: close() snapshots every session
        }
    }

    private void snapshotWhenIdle() {
        if (!lock.tryLock()) {
            snapshotLater();
            return;
        }
        try {
            snapshot();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Has the kernel write every variable changed since the last snapshot (under the lock). Returns
     * its reply, or null if there is no kernel or nothing to write.
     */
    private ObjectNode snapshot() {
        if (store == null || kernel == null || !kernel.isAlive() || unsaved.isEmpty()) {
            return null;
        }
        try {
            KernelReply reply = kernel.call(request("snapshot"), null, null, settings.interruptGrace());
            ObjectNode body = reply.body();
            if (!reply.ok()) {
                log.warn("session {}: snapshot failed: {}", id, body.path("message").asText());
                return null;
            }
            Instant at = Instant.now();
            ObjectNode done = kernels.json().createObjectNode().put("at", at.toString())
                    .put("bytes_written", body.path("bytes").asLong()).put("duration_ms", body.path("duration_ms").asDouble());
            done.set("written", body.path("written"));
            unsaved = Set.of();
            Set<String> refused = new LinkedHashSet<>();
            body.path("not_persisted").fieldNames().forEachRemaining(refused::add);
            notPersisted = refused;
            save(at);
            store.flush();
            long copying = System.nanoTime();
            try {
                // after the record is saved, so that a store that copies the record copies this snapshot's
                store.snapshots().committed(id);
                done.put("stored_ms", Math.round((System.nanoTime() - copying) / 1e4) / 100.0);
            } catch (IOException | RuntimeException e) {
                log.warn("session {}: snapshot not copied to the snapshot store: {}", id, e.getMessage());
                done.put("store_error", e.getMessage());
            }
            // shown only now: a snapshot_at that rlm_sessions lists is in the store
            snapshotAt = at;
            lastSnapshot = done;
            return body;
        } catch (KernelDiedException e) {
            log.warn("session {}: the kernel died writing its snapshot ({}); the next call restores the last one",
                    id, e.getMessage());
            kernel = null;
            kernelRestarts++;
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

    /** The kernel's reply as the agent sees it (status and session first), or its refusal thrown. */
    private ObjectNode checked(KernelReply reply, String status) {
        ObjectNode body = reply.body();
        JsonNode pending = body.remove("variables_unsaved");
        if (pending != null) {
            Set<String> names = new LinkedHashSet<>();
            pending.forEach(n -> names.add(n.asText()));
            unsaved = names;
            snapshotLater();
        }
        if (!reply.ok()) {
            ErrorCode code = ErrorCode.of(body.path("code").asText());
            String argument = body.path("argument").isTextual() ? body.path("argument").asText() : null;
            throw new RlmException(code, body.path("message").asText("the kernel refused the request"), argument,
                    fixFor(code));
        }
        body.remove("ok");
        body.remove("id");
        ObjectNode shown = kernels.json().createObjectNode();
        if (status != null) {
            shown.put("status", status);
        }
        shown.put("session_id", id);
        return shown.setAll(body);
    }

    private static String fixFor(ErrorCode code) {
        return switch (code) {
            case VARIABLE_NOT_FOUND -> "call rlm_list_vars to see the variables of this session";
            case INVALID_DATA -> "check that data_type matches the data, or load it as text";
            case OUT_OF_MEMORY -> "free memory with rlm_clear, or load a smaller part of the data";
            case INTERRUPTED -> "the load was cancelled or ran past --max-timeout-s; load a smaller part";
            default -> null;
        };
    }

    private ObjectNode kernelLost(KernelDiedException e, Duration timeout) {
        Kernel dead = kernel;
        kernel = null;
        kernelRestarts++;
        memoryBytes = 0;
        variablesSeen = null;
        if (dead != null) {
            dead.close();
        }
        Set<String> lost = new LinkedHashSet<>(unsaved);
        lost.addAll(notPersisted);
        unsaved = Set.of();
        String fresh;
        try {
            restored = null;
            kernel = startKernel();
            fresh = "a fresh kernel is ready";
        } catch (RlmException startFailure) {
            fresh = "a fresh kernel could not be started yet (" + startFailure.getMessage() + "); the next call retries";
        }
        String what = e.reason() == KernelDiedException.Cause.KILLED_AFTER_TIMEOUT
                ? "the code ran past its %s s timeout and ignored the interrupt, so the kernel was killed"
                        .formatted(seconds(timeout))
                : e.getMessage();
        ObjectNode body = kernels.json().createObjectNode();
        body.put("status", e.reason() == KernelDiedException.Cause.KILLED_AFTER_TIMEOUT ? "killed" : "crashed");
        body.put("session_id", id);
        if (store == null) {
            body.put("message", what + ". ALL VARIABLES OF THIS SESSION WERE LOST: reload the data; " + fresh + ".");
            body.put("variables_lost", true);
        } else {
            String from = snapshotAt == null ? "the session's snapshot" : "the snapshot of " + snapshotAt;
            String back = restored == null ? "" : " (%d variables, %d functions and classes)"
                    .formatted(restored.path("spilled").size(), restored.path("restored").size());
            body.put("message", what + ". " + fresh.substring(0, 1).toUpperCase() + fresh.substring(1)
                    + (kernel == null ? "" : " with " + from + back) + ". " + (lost.isEmpty()
                            ? "Nothing newer than the snapshot was lost, except any change the failed call itself was making."
                            : "Lost, because they were newer than the snapshot or could not be saved: "
                                    + String.join(", ", lost) + " (and any change the failed call itself was making); "
                                    + "redo the steps that made them."));
            body.put("variables_lost", !lost.isEmpty());
            body.set("lost_variables", kernels.json().valueToTree(List.copyOf(lost)));
            body.put("snapshot_at", snapshotAt == null ? null : snapshotAt.toString());
        }
        body.put("kernel_exit", e.exit());
        body.put("kernel_restarts", kernelRestarts);
        save();
        return body;
    }

    private void describeEvictions(ObjectNode body) {
        JsonNode evicted = body.path("evicted");
        if (!evicted.isArray() || evicted.isEmpty()) {
            return;
        }
        StringBuilder spilled = new StringBuilder();
        StringBuilder dropped = new StringBuilder();
        long bytes = 0;
        for (JsonNode v : evicted) {
            boolean kept = v.path("spilled").asBoolean();
            StringBuilder names = kept ? spilled : dropped;
            names.append(names.isEmpty() ? "" : ", ").append(v.path("name").asText());
            if (!kept && v.has("reason")) {
                names.append(" (").append(v.path("reason").asText()).append(")");
            }
            bytes += v.path("size_bytes").asLong();
        }
        String note = "memory passed %d%% of the %s limit, so the least recently used variables were moved out to get under %d%% (%s)."
                .formatted(Math.round(settings.cleanupThreshold() * 100), Bytes.human(settings.memoryLimitBytes()),
                        Math.round(settings.cleanupTarget() * 100), Bytes.human(bytes));
        if (!spilled.isEmpty()) {
            note += " Spilled to disk: " + spilled + "; code that uses them loads them back by itself.";
        }
        if (!dropped.isEmpty()) {
            note += " Dropped: " + dropped + ". They are gone; reload them if needed.";
        }
        body.put("memory_note", note);
    }

    private ObjectNode request(String op) {
        return kernels.json().createObjectNode().put("op", op);
    }

    private static String seconds(Duration d) {
        return d == null ? "unlimited" : (d.toMillis() % 1000 == 0 ? String.valueOf(d.toSeconds())
                : String.format("%.1f", d.toMillis() / 1000.0));
    }

    public int kernelRestarts() {
        return kernelRestarts;
    }

    /** Stops the kernel, snapshotting first what changed (at shutdown). */
    @Override
    public void close() {
        lock.lock();
        try {
            cancelSnapshot();
            snapshot();
            if (kernel != null) {
                kernel.close();
                kernel = null;
            }
        } finally {
            lock.unlock();
        }
    }

    /** Stops the kernel without a snapshot: the session is being deleted. */
    void discard() {
        lock.lock();
        try {
            cancelSnapshot();
            unsaved = Set.of();
            if (kernel != null) {
                kernel.close();
                kernel = null;
            }
        } finally {
            lock.unlock();
        }
    }

    private synchronized void cancelSnapshot() {
        if (snapshotDue != null) {
            snapshotDue.cancel(false);
            snapshotDue = null;
        }
    }
}

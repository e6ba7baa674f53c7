package dev.rlmmcp.core;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.kernel.protocol.MemoryUse;
import dev.rlmmcp.llm.LlmAccount;
import dev.rlmmcp.llm.LlmUsage;
import dev.rlmmcp.store.StateStore;
import java.time.Instant;
import java.util.List;

/**
 * A session's account of itself: whether it takes steps (its state, the guardrail that stopped it,
 * its final answer), what it has counted against its guardrails, its trace, and the record of all
 * that, written to the store as it changes. Changed under the session's lock; the volatile fields
 * are also read by listings, which never wait on a call.
 */
final class SessionLedger {

    private final String id;
    private final String name;
    private final Instant created;
    private final StateStore store;
    private final ObjectMapper json;
    private final Guardrails guardrails;
    private final LlmAccount llmAccount;
    private final Trace trace;
    private final Snapshots snapshots;
    private final SessionKernel kernel;
    volatile Instant lastActive;
    volatile SessionState state = SessionState.ACTIVE;
    volatile String stoppedBy;
    volatile long memoryBytes;
    volatile String finalAnswer;

    SessionLedger(
            String id,
            String name,
            Instant created,
            StateStore store,
            ObjectMapper json,
            Guardrails guardrails,
            LlmAccount llmAccount,
            Trace trace,
            Snapshots snapshots,
            SessionKernel kernel) {
        this.id = id;
        this.name = name;
        this.created = created;
        this.lastActive = created;
        this.store = store;
        this.json = json;
        this.guardrails = guardrails;
        this.llmAccount = llmAccount;
        this.trace = trace;
        this.snapshots = snapshots;
        this.kernel = kernel;
    }

    Guardrails guardrails() {
        return guardrails;
    }

    /** Notes a finished step or load: the guardrail it tripped (null if none) and the memory it left. */
    GuardrailStop settle(Integer step, String tripped, MemoryUse memory) {
        if (memory != null) {
            memoryBytes = memory.totalBytes();
        }
        if (tripped == null) {
            return null;
        }
        stop(tripped);
        return new GuardrailStop(
                tripped,
                guardrails.stopMessage(id, tripped) + " This " + (step == null ? "load" : "step")
                        + " was done; further steps are refused.");
    }

    void requireOpen() {
        switch (state) {
            case ACTIVE -> {}
            case FINALIZED ->
                throw new RlmException(
                        ErrorCode.SESSION_FINALIZED,
                        "session " + id + " is finalized and takes no more steps",
                        "session_id",
                        "read its answer with rlm_get_trace, or start a new session with rlm_init_context");
            case STOPPED -> throw guardrailStop(stoppedBy);
            case EXPIRED ->
                throw new RlmException(
                        ErrorCode.SESSION_EXPIRED,
                        "session " + id + " expired after being idle; its kernel and variables were released",
                        "session_id",
                        "start a new session with rlm_init_context (or omit session_id) and load the data again");
        }
    }

    /** Refuses further steps: {@code guardrail} was tripped. */
    void stop(String guardrail) {
        state = SessionState.STOPPED;
        stoppedBy = guardrail;
        save();
    }

    RlmException guardrailStop(String guardrail) {
        return new RlmException(
                ErrorCode.GUARDRAIL_STOP,
                guardrails.stopMessage(id, guardrail),
                "session_id",
                "finalize with rlm_finalize (final_text or final_var_name), or start a new session with higher limits");
    }

    String record(
            Integer step,
            String kind,
            String input,
            String status,
            String output,
            List<String> changed,
            double ms,
            long io,
            String tripped,
            LlmUsage usage,
            Object llmCalls) {
        return record(step, kind, input, status, output, changed, ms, io, tripped, usage, llmCalls, null);
    }

    /**
     * Appends an entry to the trace, and to the store's copy of it. Returns why the step did not reach
     * the cluster before its reply (cluster mode only), else null.
     */
    String record(
            Integer step,
            String kind,
            String input,
            String status,
            String output,
            List<String> changed,
            double ms,
            long io,
            String tripped,
            LlmUsage usage,
            Object llmCalls,
            JsonNode rlm) {
        Step entry = trace.append(
                step,
                kind,
                input,
                status,
                output,
                changed,
                ms,
                io,
                tripped,
                memoryBytes,
                usage == null ? null : json.valueToTree(usage),
                llmCalls == null ? null : json.valueToTree(llmCalls),
                rlm);
        snapshots.recorded();
        if (store == null) {
            return null;
        }
        SessionRecords.append(store, json, stored(snapshots.at()), entry);
        return store.beforeReply(id); // cluster mode: the step reaches the cluster first; else nothing
    }

    /** The session as stored: everything but the trace and the variables. */
    SessionRecord stored(Instant snapshotAt) {
        return new SessionRecord(
                id,
                name,
                created,
                lastActive,
                state,
                stoppedBy,
                finalAnswer,
                guardrails.steps(),
                guardrails.runtimeMs(),
                guardrails.ioBytes(),
                trace.length(),
                kernel.restarts(),
                snapshotAt,
                guardrails.limits(),
                llmAccount.limits());
    }

    void save() {
        save(snapshots.at());
    }

    void save(Instant snapshotAt) {
        if (store != null) {
            SessionRecords.save(store, json, stored(snapshotAt));
        }
    }
}

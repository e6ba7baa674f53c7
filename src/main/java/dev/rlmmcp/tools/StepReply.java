package dev.rlmmcp.tools;

import dev.rlmmcp.core.CodeError;
import dev.rlmmcp.core.Eviction;
import dev.rlmmcp.core.KernelLoss;
import dev.rlmmcp.core.KernelSettings;
import dev.rlmmcp.core.MemoryUsage;
import dev.rlmmcp.core.StepOutput;
import dev.rlmmcp.core.StepResult;
import dev.rlmmcp.core.StepStatus;
import dev.rlmmcp.llm.LlmUsage;
import java.util.List;
import java.util.Map;

/**
 * The JSON reply of a code step (rlm_execute, rlm_run_repl): status and session, what the code did,
 * and, in sentences, what the agent must know (interrupted, kernel lost, evictions, guardrail). Its
 * output schema is derived from this record ({@link ReplySchema}), so reply and schema cannot drift.
 */
record StepReply(
        StepStatus status,
        String sessionId,
        Integer step,
        String stdout,
        String stderr,
        CodeError error,
        List<String> variablesChanged,
        List<String> variablesDeleted,
        Double durationMs,
        List<Eviction> evicted,
        MemoryUsage memory,
        Map<String, StepOutput.Truncated> truncated,
        Map<String, String> notPersisted,
        StepOutput.SnapshotLoad loadedFromSnapshot,
        String message,
        String memoryNote,
        LlmUsage llmUsage,
        String guardrailStop,
        String guardrailMessage,
        List<String> notSaved,
        List<String> stillWriting,
        List<String> lostAtStop,
        Boolean variablesLost,
        List<String> lostVariables,
        String snapshotAt,
        String kernelExit,
        Integer kernelRestarts,
        LossReply kernelRestarted) {

    /** A kernel lost since the last call and replaced before this one ran. */
    public record LossReply(
            String message,
            boolean variablesLost,
            List<String> lostVariables,
            String snapshotAt,
            String kernelExit,
            int kernelRestarts) {

        static LossReply of(KernelLoss loss) {
            return loss == null
                    ? null
                    : new LossReply(
                            loss.message(),
                            loss.variablesLost(),
                            loss.persisted() ? loss.lost() : null,
                            StepReply.snapshotAt(loss),
                            loss.exit(),
                            loss.restarts());
        }
    }

    public static StepReply of(StepResult r, KernelSettings settings) {
        StepOutput e = r.exec();
        KernelLoss loss = r.loss();
        KernelLoss before = r.replacedBefore();
        String message = r.message();
        List<String> lost = loss != null
                ? (loss.persisted() ? loss.lost() : null)
                : before != null && before.persisted() ? before.lost() : null;
        return new StepReply(
                r.status(),
                r.sessionId(),
                r.step(),
                e == null ? null : e.stdout(),
                e == null ? null : e.stderr(),
                e == null ? null : e.error(),
                e == null ? null : e.variablesChanged(),
                e == null ? null : e.variablesDeleted(),
                e == null ? null : e.durationMs(),
                e == null ? null : e.evicted(),
                e == null ? null : e.memory(),
                e == null ? null : e.truncated(),
                e == null ? null : e.notPersisted(),
                e == null ? null : e.loadedFromSnapshot(),
                message,
                e == null ? null : EvictionNote.of(e.evicted(), settings),
                r.llmUsage(),
                r.guardrail() == null ? null : r.guardrail().guardrail(),
                r.guardrail() == null ? null : r.guardrail().message(),
                r.notSaved(),
                r.stillWriting(),
                r.lostAtStop(),
                loss == null ? null : loss.variablesLost(),
                lost,
                loss == null ? null : snapshotAt(loss),
                loss == null ? null : loss.exit(),
                loss == null ? null : loss.restarts(),
                LossReply.of(before));
    }

    static String snapshotAt(KernelLoss loss) {
        return loss.persisted() && loss.snapshotAt() != null ? loss.snapshotAt().toString() : null;
    }
}

package dev.rlmmcp.kernel.protocol;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.util.List;
import java.util.Map;

/**
 * What a cell did: its output (each stream clipped to the output cap, {@code truncated} saying
 * where the rest is), the error it raised (or null), the variables it set and deleted, what the
 * memory policy moved out, the memory after it, the new values no snapshot can hold (with why) and
 * the variables it brought back from the snapshot; for a cell of an RLM's loop
 * ({@link KernelRequest.Exec#answer()}), what the {@code answer} dict holds (null when there is none).
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public record ExecResult(
        String stdout,
        String stderr,
        PyError error,
        List<String> variablesChanged,
        List<String> variablesDeleted,
        double durationMs,
        List<Evicted> evicted,
        MemoryUse memory,
        Map<String, Truncation> truncated,
        Map<String, String> notPersisted,
        Unspilled loadedFromSnapshot,
        LoopAnswer answer) {

    public ExecResult {
        stdout = stdout == null ? "" : stdout;
        stderr = stderr == null ? "" : stderr;
        variablesChanged = variablesChanged == null ? List.of() : variablesChanged;
        variablesDeleted = variablesDeleted == null ? List.of() : variablesDeleted;
        evicted = evicted == null ? List.of() : evicted;
    }

    /** Whether the code was stopped by an interrupt (its timeout, or the client's cancellation). */
    public boolean interrupted() {
        return error != null && Boolean.TRUE.equals(error.interrupted());
    }
}

package dev.rlmmcp.core;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.util.List;
import java.util.Map;

/**
 * What a step's code did: its output (each stream clipped to the output cap, {@code truncated} saying
 * where the rest is), the error it raised (or null), the variables it set and deleted, what the
 * memory policy moved out, the memory after it, the new values no snapshot can hold (with why), the
 * variables it brought back from the snapshot, and for a step of an RLM's loop what its
 * {@code answer} dict holds (null when there is none). Core's own record, so that a change to the
 * kernel's reply stops at core.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StepOutput(
        String stdout,
        String stderr,
        CodeError error,
        List<String> variablesChanged,
        List<String> variablesDeleted,
        double durationMs,
        List<Eviction> evicted,
        MemoryUsage memory,
        Map<String, Truncated> truncated,
        Map<String, String> notPersisted,
        SnapshotLoad loadedFromSnapshot,
        RlmAnswer answer) {

    /** Whether the code was stopped by an interrupt (a timeout or a cancellation), its variables intact. */
    public boolean interrupted() {
        return error != null && Boolean.TRUE.equals(error.interrupted());
    }

    /** One output stream cut at the output cap: how long it was, how much is shown, and where the rest is kept. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Truncated(long totalChars, long shownChars, String keptIn, long keptChars) {}

    /** The variables a step brought back from the snapshot because its code used them. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record SnapshotLoad(List<String> names, long bytes, double durationMs) {}

    /** What the RLM answer protocol's {@code answer} dict holds after a step of the loop. */
    public record RlmAnswer(String content, boolean ready) {}
}

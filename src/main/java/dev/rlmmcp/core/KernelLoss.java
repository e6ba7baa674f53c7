package dev.rlmmcp.core;

import dev.rlmmcp.base.Text;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * A kernel that died, during a call ({@code timeout} that call's limit) or since the last one
 * ({@code timeout} null), and its replacement: whether a fresh kernel is ready ({@code startFailure}
 * null) and what it restored, and which variables are lost. {@code persisted} says the session has
 * a snapshot store; {@code restoredVariables} and {@code restoredDefinitions} count what the fresh
 * kernel got back from it (null if none started). {@link #message()} says it plainly for the agent.
 */
public record KernelLoss(
        Cause cause,
        String exit,
        String detail,
        Duration timeout,
        boolean persisted,
        String startFailure,
        Instant snapshotAt,
        Integer restoredVariables,
        Integer restoredDefinitions,
        List<String> lost,
        int restarts) {

    /**
     * Why the kernel ended: killed after ignoring a timeout's interrupt, crashed, broke the protocol,
     * stopped by the server, or stopped answering.
     */
    public enum Cause {
        KILLED_AFTER_TIMEOUT,
        CRASHED,
        PROTOCOL_VIOLATION,
        STOPPED,
        UNANSWERED
    }

    public boolean betweenCalls() {
        return timeout == null;
    }

    /** The status of a step whose kernel this was. */
    public StepStatus status() {
        return switch (cause) {
            case KILLED_AFTER_TIMEOUT, STOPPED, UNANSWERED -> StepStatus.KILLED;
            case CRASHED, PROTOCOL_VIOLATION -> StepStatus.CRASHED;
        };
    }

    /** Whether variables were lost: all of them without a store, else those no snapshot held. */
    public boolean variablesLost() {
        return !persisted || !lost.isEmpty();
    }

    public String message() {
        boolean ownDeath = cause == Cause.CRASHED || cause == Cause.KILLED_AFTER_TIMEOUT;
        String what = betweenCalls()
                ? (ownDeath
                        ? "The kernel had died since the last call (" + exit + ")"
                        : "Since the last call, " + detail)
                : cause == Cause.KILLED_AFTER_TIMEOUT
                        ? "the code ran past its %s s timeout and ignored the interrupt, so the kernel was killed"
                                .formatted(Text.seconds(timeout))
                        : detail;
        String fresh = startFailure == null
                ? "a fresh kernel is ready"
                : "a fresh kernel could not be started yet (" + startFailure + "); the next call retries";
        if (!persisted) {
            return what + ". ALL VARIABLES OF THIS SESSION WERE LOST: reload the data; " + fresh + ".";
        }
        String failedCall = betweenCalls() ? "" : " (and any change the failed call itself was making)";
        String from = snapshotAt == null ? "the session's snapshot" : "the snapshot of " + snapshotAt;
        String back = restoredVariables == null
                ? ""
                : " (%d variables, %d functions and classes)".formatted(restoredVariables, restoredDefinitions);
        return what + ". " + fresh.substring(0, 1).toUpperCase() + fresh.substring(1)
                + (startFailure != null ? "" : " with " + from + back) + ". "
                + (lost.isEmpty()
                        ? "Nothing newer than the snapshot was lost"
                                + (betweenCalls() ? "." : ", except any change the failed call itself was making.")
                        : "Lost, because they were newer than the snapshot or could not be saved: "
                                + String.join(", ", lost) + failedCall + "; redo the steps that made them.")
                + (betweenCalls() && startFailure == null ? " This call ran on the fresh kernel." : "");
    }
}

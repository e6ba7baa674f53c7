package dev.rlmmcp.core;

import java.time.Duration;

/**
 * Counts a session's steps, runtime and I/O against its {@link Limits}, so that a runaway agent stops:
 * a step whose index reaches max_steps is not run; runtime and budget stop the session once passed.
 * Not thread-safe: the session calls it under its lock.
 */
final class Guardrails {

    static final String MAX_STEPS = "max_steps";
    static final String TIMEOUT = "timeout";
    static final String BUDGET = "budget_exceeded";

    private final Limits limits;
    private int steps;
    private long runtimeMs;
    private long ioBytes;

    Guardrails(Limits limits) {
        this.limits = limits;
    }

    Limits limits() {
        return limits;
    }

    int steps() {
        return steps;
    }

    long runtimeMs() {
        return runtimeMs;
    }

    long ioBytes() {
        return ioBytes;
    }

    /** Counts carried over from before a restart. */
    void restore(int steps, long runtimeMs, long ioBytes) {
        this.steps = steps;
        this.runtimeMs = runtimeMs;
        this.ioBytes = ioBytes;
    }

    /** The guardrail that forbids the next step, or null. */
    String beforeStep() {
        if (limits.maxSteps() != null && steps >= limits.maxSteps()) {
            return MAX_STEPS;
        }
        return passed();
    }

    /** A step's timeout: the one asked for, cut to the runtime the session has left. */
    Duration stepTimeout(Duration asked) {
        if (limits.maxRuntimeMs() == null) {
            return asked;
        }
        Duration left = Duration.ofMillis(Math.max(1, limits.maxRuntimeMs() - runtimeMs));
        return left.compareTo(asked) < 0 ? left : asked;
    }

    /** Counts a finished step; returns the guardrail it tripped, or null. */
    String afterStep(long durationMs, long io) {
        steps++;
        runtimeMs += durationMs;
        ioBytes += io;
        return passed();
    }

    /** Counts data loaded; returns the guardrail it tripped, or null. */
    String afterLoad(long io) {
        ioBytes += io;
        return passed();
    }

    /** What the session says when {@code guardrail} stops it. */
    String stopMessage(String sessionId, String guardrail) {
        return switch (guardrail) {
            case MAX_STEPS -> "session " + sessionId + " reached max_steps (" + limits.maxSteps() + ").";
            case TIMEOUT ->
                "session " + sessionId + " used its max_runtime_ms (" + limits.maxRuntimeMs() + " ms; used " + runtimeMs
                        + " ms).";
            default ->
                "session " + sessionId + " spent its budget_limit (" + limits.budgetBytes() + " bytes of I/O; used "
                        + ioBytes + ").";
        };
    }

    private String passed() {
        if (limits.maxRuntimeMs() != null && runtimeMs > limits.maxRuntimeMs()) {
            return TIMEOUT;
        }
        if (limits.budgetBytes() != null && ioBytes > limits.budgetBytes()) {
            return BUDGET;
        }
        return null;
    }
}

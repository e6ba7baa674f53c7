package dev.rlmmcp.core;

import java.time.Instant;
import java.util.List;

/** A session's variables as its kernel last listed them, for those who watch it without waiting on it. */
final class SeenVariables {

    private volatile List<Variable> list;
    private volatile Instant at;

    void see(List<Variable> variables) {
        if (variables != null) {
            list = List.copyOf(variables);
            at = Instant.now();
        }
    }

    /** The kernel died: the list it gave is no longer true. */
    void forget() {
        list = null;
    }

    /**
     * The list as last seen (or, if none was, the names {@code trace} knows), with where it comes
     * from: {@code asked} says the kernel was asked just now.
     */
    VariablesView view(String sessionId, boolean running, boolean asked, Trace trace) {
        List<Variable> seen = list;
        String note = asked
                ? null
                : !running
                        ? "the kernel is not running; shown as last known, values are not loaded"
                        : "code is running; shown as last seen";
        return new VariablesView(
                sessionId,
                running,
                asked ? "kernel" : seen != null ? "last_seen" : "trace",
                note,
                at == null ? null : at.toString(),
                seen != null
                        ? seen
                        : trace.variableNames().stream().map(Variable::named).toList());
    }
}

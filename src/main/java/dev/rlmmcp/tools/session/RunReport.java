package dev.rlmmcp.tools.session;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.rlm.RunFigures;
import dev.rlmmcp.rlm.RunOutcome;
import dev.rlmmcp.tools.Replies;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** How a root RLM run is told: its progress in one line, its figures in one line, and its JSON reply. */
public final class RunReport {

    private RunReport() {}

    /**
     * "iteration 3, depth 1, 2 children running, 12,345 tokens, $0.0123": the RLM that just moved (its
     * iteration, none when a child started or ended), and the tree.
     */
    public static String status(RunFigures f, int iteration, int depth) {
        List<String> parts = new ArrayList<>();
        if (iteration > 0) { // 0: a child started or ended, no turn
            parts.add("iteration " + iteration);
        }
        parts.add("depth " + depth);
        parts.add(f.childrenRunning() + (f.childrenRunning() == 1 ? " child" : " children") + " running");
        parts.add(String.format(Locale.ROOT, "%,d tokens", f.inputTokens() + f.outputTokens()));
        if (f.costUsd() != null) {
            parts.add(usd(f.costUsd()));
        }
        return String.join(", ", parts);
    }

    /** "12 iterations, 3 children, depth 2 reached, 15,234 input + 1,200 output tokens, $0.0123, 2 cache hits, 8.4 s". */
    public static String figures(RunFigures f) {
        List<String> parts = new ArrayList<>();
        parts.add(f.iterations() + (f.iterations() == 1 ? " iteration" : " iterations"));
        parts.add(f.children() + (f.children() == 1 ? " child" : " children"));
        parts.add("depth " + f.depthReached() + " reached");
        parts.add(String.format(Locale.ROOT, "%,d input + %,d output tokens", f.inputTokens(), f.outputTokens()));
        parts.add(f.costUsd() == null ? "cost unknown (no price for the model)" : usd(f.costUsd()));
        parts.add(f.cacheHits() + (f.cacheHits() == 1 ? " cache hit" : " cache hits"));
        if (f.llmCalls() > 0) {
            parts.add(f.llmCalls() + " llm_query " + (f.llmCalls() == 1 ? "call" : "calls"));
        }
        parts.add(String.format(Locale.ROOT, "%.1f s", f.elapsedMs() / 1000.0));
        return String.join(", ", parts);
    }

    private static String usd(double cost) {
        return String.format(Locale.ROOT, cost < 1 ? "$%.4f" : "$%.2f", cost);
    }

    /**
     * rlm_solve's reply: the session, the outcome's fields (answer, ready, stopped_by, stop_message,
     * figures), and the trace entry that holds the run's trajectory ({@code traceEntry} null if none).
     */
    public static ObjectNode reply(String sessionId, RunOutcome outcome, Integer traceEntry) {
        ObjectNode reply = JsonNodeFactory.instance.objectNode();
        reply.put("session_id", sessionId);
        reply.setAll(Replies.tree(outcome));
        if (!reply.has("answer")) {
            reply.putNull("answer");
        }
        if (traceEntry != null) {
            reply.put("trace_entry", traceEntry);
            reply.put(
                    "trajectory",
                    "rlm_get_trace(session_id=\"" + sessionId + "\", start=" + traceEntry + ", end=" + (traceEntry + 1)
                            + ")");
        }
        return reply;
    }
}

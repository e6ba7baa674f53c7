package dev.rlmmcp.tools;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.Finalized;
import dev.rlmmcp.core.KernelAnswer;
import dev.rlmmcp.core.KernelLoss;
import dev.rlmmcp.core.KernelSettings;
import dev.rlmmcp.core.LoadResult;
import dev.rlmmcp.core.MemoryReport;
import dev.rlmmcp.core.SessionSummary;
import dev.rlmmcp.core.StepOutcome;
import dev.rlmmcp.core.StepResult;
import dev.rlmmcp.core.TraceView;
import dev.rlmmcp.core.VariablesView;
import dev.rlmmcp.llm.PendingCalls;
import java.util.List;

/**
 * Every tool's JSON reply, made from the records the core returns, in one place and with one
 * mapping: field names in snake_case, absent values left out. The renderers (text, Markdown, TOON)
 * read these trees.
 */
public final class Replies {

    static final ObjectMapper JSON = JsonMapper.builder()
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .serializationInclusion(JsonInclude.Include.NON_NULL)
            .build();

    private Replies() {}

    public static ObjectNode tree(Object value) {
        return JSON.valueToTree(value);
    }

    public static ObjectNode step(StepResult result, KernelSettings settings) {
        return tree(StepReply.of(result, settings));
    }

    /**
     * A call that ran a step: the step's reply (without the output a suspended step's earlier replies
     * showed), or the step suspended with the sub-calls it waits for the agent to answer.
     */
    public static ObjectNode outcome(StepOutcome outcome, KernelSettings settings) {
        return switch (outcome) {
            case StepOutcome.Done done -> {
                ObjectNode reply = step(done.result(), settings);
                String stdout = reply.path("stdout").asText("");
                if (!done.shown().isEmpty() && stdout.startsWith(done.shown())) {
                    reply.put("stdout", stdout.substring(done.shown().length()));
                }
                if (done.notice() != null) {
                    reply.put("notice", done.notice());
                }
                yield reply;
            }
            case StepOutcome.Suspended suspended -> suspended(suspended);
        };
    }

    /** A step waiting for the agent: what it waits for, what it printed, and how to answer. */
    public static ObjectNode suspended(StepOutcome.Suspended s) {
        ObjectNode reply = JSON.createObjectNode().put("status", "suspended").put("session_id", s.sessionId());
        var pending = reply.putArray("pending");
        for (PendingCalls.Call c : s.pending()) {
            ObjectNode call = pending.addObject()
                    .put("id", c.id())
                    .put("kind", c.kind())
                    .put("chars", c.chars())
                    .put("preview", c.preview(PREVIEW_CHARS));
            if (c.childSession() != null) {
                call.put("child_session_id", c.childSession());
            }
        }
        reply.put("stdout", s.printed());
        return reply;
    }

    /** How much of each pending prompt a suspended reply shows. */
    static final int PREVIEW_CHARS = 160;

    /** A kernel's answer that is no step: the session, the body's fields, and what the agent must know. */
    public static ObjectNode answer(KernelAnswer<?> answer) {
        ObjectNode reply = JSON.createObjectNode().put("session_id", answer.sessionId());
        reply.setAll(answer.body() instanceof MemoryReport m ? memory(m) : tree(answer.body()));
        return told(reply, answer.notSaved(), answer.stillWriting(), answer.lostAtStop(), answer.replacedBefore());
    }

    public static ObjectNode load(LoadResult result, KernelSettings settings) {
        ObjectNode reply = JSON.createObjectNode().put("session_id", result.sessionId());
        reply.setAll(tree(result.loaded()));
        String note = EvictionNote.of(result.loaded().evicted(), settings);
        if (note != null) {
            reply.put("memory_note", note);
        }
        if (result.path() != null) {
            reply.put("path", result.path()).put("file_bytes", result.fileBytes());
        }
        if (result.transfer() != null) {
            reply.setAll(tree(result.transfer()));
        }
        if (result.guardrail() != null) {
            reply.put("guardrail_stop", result.guardrail().guardrail())
                    .put("guardrail_message", result.guardrail().message());
        }
        return told(reply, result.notSaved(), result.stillWriting(), result.lostAtStop(), result.replacedBefore());
    }

    /** A session's summary; with a store, {@code snapshot_at} is there even before the first snapshot (null). */
    public static ObjectNode summary(SessionSummary summary) {
        ObjectNode reply = tree(summary);
        if (summary.persisted() && !reply.has("snapshot_at")) {
            reply.putNull("snapshot_at");
        }
        return reply;
    }

    public static ObjectNode trace(TraceView trace) {
        ObjectNode reply = summary(trace.summary());
        ObjectNode rest = tree(trace);
        rest.remove("summary");
        return reply.setAll(rest);
    }

    public static ObjectNode finalized(Finalized finalized) {
        return summary(finalized.summary()).put("final_answer", finalized.finalAnswer());
    }

    public static ObjectNode variables(VariablesView view) {
        return tree(view);
    }

    private static ObjectNode memory(MemoryReport report) {
        ObjectNode body = tree(report.use());
        body.put("sandbox", report.sandbox());
        if (report.python() != null) {
            body.put("python", report.python()).put("python_version", report.pythonVersion());
        }
        return body;
    }

    private static ObjectNode told(
            ObjectNode reply,
            List<String> notSaved,
            List<String> stillWriting,
            List<String> lostAtStop,
            KernelLoss before) {
        if (notSaved != null) {
            reply.set("not_saved", JSON.valueToTree(notSaved));
        }
        if (stillWriting != null) {
            reply.set("still_writing", JSON.valueToTree(stillWriting));
        }
        if (lostAtStop != null) {
            reply.set("lost_at_stop", JSON.valueToTree(lostAtStop));
        }
        if (before != null) {
            if (before.persisted()) {
                reply.set("lost_variables", JSON.valueToTree(before.lost()));
            }
            reply.set("kernel_restarted", tree(StepReply.LossReply.of(before)));
        }
        return reply;
    }
}

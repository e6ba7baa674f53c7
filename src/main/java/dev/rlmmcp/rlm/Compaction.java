package dev.rlmmcp.rlm;

import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.core.DataType;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.llm.LlmException;
import dev.rlmmcp.llm.LlmMessage;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The compaction of one RLM's conversation: when its prompt nears the model's context window, the
 * model summarizes it, and every message summarized away so far is kept in the session's {@code
 * history} variable, where the code can still read what the prompt no longer holds.
 */
final class Compaction {

    private final RlmRuns.Env env;
    private final Run run;
    private final Session session;
    private final String model;
    /** All messages summarized away so far, oldest first: the value of {@code history}. */
    private final List<LlmMessage> compacted = new ArrayList<>();

    Compaction(RlmRuns.Env env, Run run, Session session, String model) {
        this.env = env;
        this.run = run;
        this.session = session;
        this.model = model;
    }

    /**
     * Whether a prompt of these messages is near the model's context window: by its characters, or by
     * the tokens of the last call when the backend counted more.
     */
    boolean due(String system, List<LlmMessage> messages, long lastPromptTokens) {
        long chars = system.length();
        for (LlmMessage m : messages) {
            chars += m.content().length();
        }
        long tokens = Math.max(chars / 4, lastPromptTokens);
        boolean roomLeft = messages.size() < 3 || tokens < run.limits.compactAt() * run.config.window(model);
        return !roomLeft;
    }

    /** The conversation as sent to be summarized: the messages, then the request for a summary. */
    static List<LlmMessage> request(List<LlmMessage> messages) {
        List<LlmMessage> asked = new ArrayList<>(messages);
        asked.add(LlmMessage.user(LoopPrompt.SUMMARIZE));
        return asked;
    }

    /**
     * Keeps the conversation after its first message, and the model's summary of it, in {@code
     * history}; the iteration that records the compaction.
     */
    Trajectory.Iteration summarized(
            List<LlmMessage> messages, MeteredBackend.Charged reply, int from, int to, long t0, Instant at) {
        String summary = reply.answer().text();
        compacted.addAll(messages.subList(1, messages.size()));
        compacted.add(LlmMessage.assistant(summary));
        ArrayNode history = env.json().createArrayNode();
        for (LlmMessage m : compacted) {
            history.addObject().put("role", m.role()).put("content", m.content());
        }
        session.loadData("history", history.toString(), DataType.JSON, CallContext.NONE);
        return new Trajectory.Iteration(
                0,
                from,
                to,
                summary,
                List.of(),
                null,
                "compaction: " + compacted.size() + " messages summarized into `history`",
                reply.in(),
                reply.out(),
                reply.cost(),
                RlmLoop.ms(t0),
                RlmLoop.ms(t0),
                at.toString());
    }

    /** The iteration that records a compaction whose model call failed (the conversation is kept as it was). */
    static Trajectory.Iteration failed(LlmException e, int from, int to, long t0, Instant at) {
        return new Trajectory.Iteration(
                0,
                from,
                to,
                null,
                List.of(),
                null,
                "compaction failed: " + e.code() + ": " + e.getMessage(),
                0,
                0,
                null,
                RlmLoop.ms(t0),
                RlmLoop.ms(t0),
                at.toString());
    }
}

package dev.rlmmcp.tools.repl;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.AgentSteps;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.StepOutcome;
import dev.rlmmcp.llm.PendingCalls;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.Replies;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;

/**
 * rlm_pending: what a suspended step waits for, or one request's whole prompt, paged (a sub-agent reads
 * it in its own context, so the agent's stays small). A step that ended since its last reply is told here.
 */
public final class PendingTool implements RlmTool {

    private static final long MAX_PAGE = 200_000;
    private static final long DEFAULT_PAGE = 50_000;

    private final Sessions sessions;

    public PendingTool(Sessions sessions) {
        this.sessions = sessions;
    }

    @Override
    public String name() {
        return "rlm_pending";
    }

    @Override
    public String description() {
        return "The sub-calls a suspended step waits for, or one's whole prompt (id), paged.";
    }

    @Override
    public Schema schema() {
        return Schema.object()
                .string("id", "A request's id.", false)
                .integer("offset", "Default 0.", 0, Integer.MAX_VALUE)
                .integer("max_chars", "Default %d.".formatted(DEFAULT_PAGE), 1, MAX_PAGE)
                .sessionId();
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        Session session = sessions.resolve(args.sessionId(), caller.connection());
        AgentSteps steps = session.agentSteps();
        String id = args.optionalString("id");
        if (id == null) {
            StepOutcome now = steps.now();
            if (now == null) {
                String lost = steps.takeLostAtStop();
                ObjectNode reply = Replies.tree(java.util.Map.of("session_id", session.id()));
                reply.put(
                        "message",
                        lost == null
                                ? "nothing is pending in session " + session.id()
                                : "nothing is pending: the step that waited for " + (lost.isEmpty() ? "answers" : lost)
                                        + " was lost when the server stopped");
                return reply;
            }
            return Replies.outcome(now, sessions.settings());
        }
        PendingCalls.Call call = steps.calls()
                .call(id)
                .orElseThrow(() -> new RlmException(
                        ErrorCode.NOT_FOUND,
                        "no pending request " + id + " in session " + session.id(),
                        "id",
                        "use an id a suspended reply lists (rlm_pending without id lists them)"));
        return page(session, call, args);
    }

    private static ObjectNode page(Session session, PendingCalls.Call call, Args args) {
        Long offset = args.integer("offset", 0, Integer.MAX_VALUE);
        Long max = args.integer("max_chars", 1, MAX_PAGE);
        String prompt =
                call.system() == null ? call.prompt() : "[system]\n" + call.system() + "\n\n[user]\n" + call.prompt();
        int from = (int) Math.min(offset == null ? 0 : offset, prompt.length());
        int to = (int) Math.min(prompt.length(), from + (max == null ? DEFAULT_PAGE : max));
        ObjectNode reply = Replies.tree(java.util.Map.of("session_id", session.id()));
        reply.put("id", call.id()).put("kind", call.kind());
        if (call.childSession() != null) {
            reply.put("child_session_id", call.childSession());
        }
        reply.put("total_chars", prompt.length()).put("offset", from);
        if (to < prompt.length()) {
            reply.put("next_offset", to);
        }
        reply.put("prompt", prompt.substring(from, to));
        return reply;
    }
}

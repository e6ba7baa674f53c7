package dev.rlmmcp.tools.session;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.Replies;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;

/** rlm_get_trace: what a session did, step by step. */
public final class GetTraceTool implements RlmTool {

    private final Sessions sessions;

    public GetTraceTool(Sessions sessions) {
        this.sessions = sessions;
    }

    @Override
    public String name() {
        return "rlm_get_trace";
    }

    @Override
    public String description() {
        return """
                A session's trace: each code step and load with its code (clipped), output summary, status, \
                duration, variables changed, I/O bytes and guardrail events; plus totals, limits, state and \
                the final answer. start and end select entries [start, end).""";
    }

    @Override
    public Schema schema() {
        return Schema.object()
                .string("session_id", "The session.", true)
                .integer("start", "First entry (default 0).", 0, Integer.MAX_VALUE)
                .integer("end", "Entry after the last one (default: all).", 0, Integer.MAX_VALUE);
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        String id = args.requiredString("session_id");
        Long start = args.integer("start", 0, Integer.MAX_VALUE);
        Long end = args.integer("end", 0, Integer.MAX_VALUE);
        return Replies.trace(sessions.get(id).trace(start == null ? 0 : start.intValue(),
                end == null ? Integer.MAX_VALUE : end.intValue()));
    }
}

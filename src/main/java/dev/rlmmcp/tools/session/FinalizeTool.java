package dev.rlmmcp.tools.session;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.Replies;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;

/** rlm_finalize: close a session with its final answer. */
public final class FinalizeTool implements RlmTool {

    private final Sessions sessions;

    public FinalizeTool(Sessions sessions) {
        this.sessions = sessions;
    }

    @Override
    public String name() {
        return "rlm_finalize";
    }

    @Override
    public String description() {
        return """
                Finish a session with its final answer: final_text, or final_var_name (a variable whose value \
                is the answer). Later steps on the session are refused; the answer stays readable in \
                rlm_get_trace and rlm_sessions. Works on a session stopped by a guardrail too.""";
    }

    @Override
    public Schema schema() {
        return Schema.object()
                .string("session_id", "The session.", true)
                .string("final_text", "The final answer as text.", false)
                .string("final_var_name", "A variable holding the final answer.", false);
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        String id = args.requiredString("session_id");
        String text = args.optionalString("final_text");
        String variable = args.optionalString("final_var_name");
        if ((text == null) == (variable == null)) {
            throw RlmException.invalid(
                    text == null ? "final_text" : "final_var_name",
                    text == null
                            ? "rlm_finalize needs final_text or final_var_name"
                            : "rlm_finalize takes final_text or final_var_name, not both",
                    "pass the answer as final_text, or name the variable holding it as final_var_name");
        }
        return Replies.finalized(sessions.get(id).finish(text, variable));
    }
}

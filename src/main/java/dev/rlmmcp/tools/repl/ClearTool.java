package dev.rlmmcp.tools.repl;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.Replies;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;

/** rlm_clear: delete one variable, or all of them. */
public final class ClearTool implements RlmTool {

    private final Sessions sessions;

    public ClearTool(Sessions sessions) {
        this.sessions = sessions;
    }

    @Override
    public String name() {
        return "rlm_clear";
    }

    @Override
    public String description() {
        return "Delete REPL variables to free memory: pass name for one variable, or all=true for every variable.";
    }

    @Override
    public Schema schema() {
        return Schema.object()
                .string("name", "The variable to delete.", false)
                .bool("all", "Delete every variable.")
                .sessionId();
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        String name = args.optionalString("name");
        boolean all = args.flag("all");
        if ((name == null) == !all) {
            throw RlmException.invalid(
                    name == null ? "name" : "all",
                    name == null
                            ? "rlm_clear needs either name or all=true"
                            : "rlm_clear takes name or all=true, not both",
                    "pass name to delete one variable, or all=true to delete them all");
        }
        Session session = sessions.resolve(args.sessionId(), caller.connection());
        return Replies.answer(all ? session.clearAll() : session.clear(name));
    }
}

package dev.rlmmcp.tools.repl;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.Replies;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;

/** rlm_list_vars: the session's variables with type, size and a short preview. */
public final class ListVarsTool implements RlmTool {

    private final Sessions sessions;

    public ListVarsTool(Sessions sessions) {
        this.sessions = sessions;
    }

    @Override
    public String name() {
        return "rlm_list_vars";
    }

    @Override
    public String description() {
        return "List the REPL's variables: name, status (live; spilled to disk, loaded back when code uses it; lost), "
                + "type, size, length, created and last-accessed times, a short preview.";
    }

    @Override
    public Schema schema() {
        return Schema.object().sessionId();
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        return Replies.answer(
                sessions.resolve(args.sessionId(), caller.connection()).listVars());
    }
}

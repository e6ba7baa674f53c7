package dev.rlmmcp.tools.repl;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.Replies;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;

/** rlm_var_info: one variable in detail. */
public final class VarInfoTool implements RlmTool {

    private final Sessions sessions;

    public VarInfoTool(Sessions sessions) {
        this.sessions = sessions;
    }

    @Override
    public String name() {
        return "rlm_var_info";
    }

    @Override
    public String description() {
        return "Describe one REPL variable: status (live, spilled to disk, or lost), type, size in bytes and human units, "
                + "length, created and last-accessed times, a longer preview, and not_persisted with the reason if "
                + "snapshots cannot hold it.";
    }

    @Override
    public Schema schema() {
        return Schema.object().string("name", "Variable name.", true).sessionId();
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        String name = args.requiredString("name");
        return Replies.answer(
                sessions.resolve(args.sessionId(), caller.connection()).varInfo(name));
    }
}

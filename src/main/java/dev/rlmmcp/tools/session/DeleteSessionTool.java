package dev.rlmmcp.tools.session;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;

/** rlm_delete_session: end a session for good. */
public final class DeleteSessionTool implements RlmTool {

    private final Sessions sessions;

    public DeleteSessionTool(Sessions sessions) {
        this.sessions = sessions;
    }

    @Override
    public String name() {
        return "rlm_delete_session";
    }

    @Override
    public String description() {
        return "Delete a session: its kernel stops, its variables and trace are dropped, and its id stops working.";
    }

    @Override
    public Schema schema() {
        return Schema.object().string("session_id", "The session to delete.", true);
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        String id = args.requiredString("session_id");
        sessions.delete(id);
        return sessions.json().createObjectNode().put("session_id", id).put("deleted", true);
    }
}

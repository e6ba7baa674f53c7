package dev.rlmmcp.tools.session;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;

/** rlm_sessions: every session of this server. */
public final class ListSessionsTool implements RlmTool {

    private final Sessions sessions;

    public ListSessionsTool(Sessions sessions) {
        this.sessions = sessions;
    }

    @Override
    public String name() {
        return "rlm_sessions";
    }

    @Override
    public String description() {
        return "List the server's sessions, most recently active first: id, name, state (active, finalized, "
                + "stopped, expired), steps, memory of the variables, created and last active times.";
    }

    @Override
    public Schema schema() {
        return Schema.object();
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        ObjectNode body = sessions.kernels().json().createObjectNode();
        ArrayNode list = body.putArray("sessions");
        for (Session session : sessions.all()) {
            list.add(session.summary());
        }
        body.put("count", list.size());
        return body;
    }
}

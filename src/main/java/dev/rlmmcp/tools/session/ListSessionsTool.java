package dev.rlmmcp.tools.session;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.OwnedElsewhere;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.SessionState;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.Replies;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * rlm_sessions: the server's sessions, most recently active first, a page at a time. Each entry is
 * a few fields by default (everything goes into the model's context); {@code verbose} gives the
 * full summary.
 */
public final class ListSessionsTool implements RlmTool {

    static final int DEFAULT_LIMIT = 20;
    static final int MAX_LIMIT = 200;
    private static final List<String> STATES =
            Arrays.stream(SessionState.values()).map(SessionState::wireName).toList();
    /** The fields of a summary that a compact entry keeps. */
    private static final List<String> COMPACT = List.of(
            "session_id",
            "name",
            "state",
            "guardrail_stop",
            "steps",
            "memory_human",
            "last_active",
            "owner_node",
            "owner_gone");

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
        return "List the server's sessions (in a cluster, every node's, each owned elsewhere with its owner_node), "
                + "most recently active first, " + DEFAULT_LIMIT + " at a time: id, name, "
                + "state (active, finalized, stopped, expired), steps, memory of the variables, last active time. "
                + "state filters; offset pages on (the reply's next_offset); verbose adds limits, counters, "
                + "snapshot times and kernel status.";
    }

    @Override
    public Schema schema() {
        return Schema.object()
                .integer("limit", "Sessions per page (default " + DEFAULT_LIMIT + ").", 1, MAX_LIMIT)
                .integer(
                        "offset",
                        "Sessions to skip: the next_offset of the previous page (default 0).",
                        0,
                        Integer.MAX_VALUE)
                .choice("state", "Only sessions in this state (default: any).", STATES, null)
                .bool(
                        "verbose",
                        "Full entries: limits, runtime, I/O, llm_query use, snapshot and kernel status, "
                                + "created time (default false).");
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        Long limitArg = args.integer("limit", 1, MAX_LIMIT);
        Long offsetArg = args.integer("offset", 0, Integer.MAX_VALUE);
        int limit = limitArg == null ? DEFAULT_LIMIT : limitArg.intValue();
        int offset = offsetArg == null ? 0 : offsetArg.intValue();
        String state = args.optionalString("state");
        if (state != null && !STATES.contains(state)) {
            throw RlmException.invalid(
                    "state",
                    "state is '" + state + "', not a session state",
                    "use one of: " + String.join(", ", STATES));
        }
        boolean verbose = args.flag("verbose");
        List<String> unlisted = new ArrayList<>();
        List<ObjectNode> matching = listed(unlisted).stream()
                .filter(s -> state == null || s.path("state").asText().equals(state))
                .toList();
        ObjectNode body = sessions.json().createObjectNode();
        ArrayNode list = body.putArray("sessions");
        int end = (int) Math.min(matching.size(), (long) offset + limit);
        for (ObjectNode summary : matching.subList(Math.min(offset, end), end)) {
            list.add(verbose ? summary : compact(summary));
        }
        body.put("count", list.size());
        unlisted.forEach(why -> body.put("other_nodes_unlisted", why));
        body.put("total", matching.size());
        if (end < matching.size()) {
            body.put("next_offset", end);
            body.put(
                    "next",
                    "pass offset " + end + " for the next " + Math.min(limit, matching.size() - end) + " of "
                            + matching.size());
        }
        return body;
    }

    /**
     * This node's sessions and, in a cluster, those other nodes own (each with its {@code owner_node},
     * and {@code owner_gone} if that node is gone: the session resumes wherever it is called next),
     * most recently active first; if the cluster's could not be read, why goes into {@code unlisted}.
     */
    private List<ObjectNode> listed(List<String> unlisted) {
        List<ObjectNode> all = new ArrayList<>();
        String me = sessions.nodeId().orElse(null);
        for (Session session : sessions.all()) {
            ObjectNode summary = Replies.summary(session.summary());
            if (me != null) {
                summary.put("owner_node", me); // in a cluster every entry names its owner, this node included
            }
            all.add(summary);
        }
        List<OwnedElsewhere> elsewhere = List.of();
        try {
            elsewhere = sessions.elsewhere();
        } catch (RlmException e) { // the cluster database did not answer: this node's sessions still are listed
            unlisted.add(e.getMessage());
        }
        for (OwnedElsewhere other : elsewhere) {
            ObjectNode summary = Replies.summary(other.summary());
            summary.remove("kernel_running");
            if (other.ownerNode() != null) {
                summary.put("owner_node", other.ownerNode());
            }
            if (!other.ownerLive()) {
                summary.put("owner_gone", true);
            }
            all.add(summary);
        }
        if (all.size() > 1) {
            all.sort(Comparator.comparing((ObjectNode s) ->
                            Instant.parse(s.path("last_active").asText()))
                    .reversed());
        }
        return all;
    }

    private static ObjectNode compact(ObjectNode summary) {
        ObjectNode entry = summary.objectNode();
        for (String field : COMPACT) {
            if (summary.has(field)) {
                entry.set(field.equals("memory_human") ? "memory" : field, summary.get(field));
            }
        }
        return entry;
    }
}

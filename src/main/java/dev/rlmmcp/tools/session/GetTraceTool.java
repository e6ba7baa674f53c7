package dev.rlmmcp.tools.session;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.rlm.TrajectoryJsonl;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.Replies;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;
import java.util.ArrayList;
import java.util.List;

/** rlm_get_trace: what a session did, step by step; an RLM run's tree, or the run as JSONL. */
public final class GetTraceTool implements RlmTool {

    static final String RLM_JSONL = "rlm_jsonl";
    private static final long MAX_PAGE = 1_000_000;

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
                the final answer. start and end select entries [start, end). RLM runs show as a tree (each \
                RLM's depth, prompt, iterations, answer, stop reason, tokens, cost). export "rlm_jsonl" with \
                entry: that run as JSONL in alexzhang13/rlm's logger format, paged by offset and max_chars.""";
    }

    @Override
    public Schema schema() {
        return Schema.object()
                .string("session_id", "The session.", true)
                .integer("start", "First entry (default 0).", 0, Integer.MAX_VALUE)
                .integer("end", "Entry after the last one (default: all).", 0, Integer.MAX_VALUE)
                .choice("export", "Export an entry's RLM run.", List.of(RLM_JSONL), null)
                .integer("entry", "With export: the entry's index.", 0, Integer.MAX_VALUE)
                .integer("offset", "With export: first character (default 0).", 0, Schema.MAX_INTEGER)
                .integer(
                        "max_chars",
                        "With export: characters per page (default %d)."
                                .formatted(sessions.settings().outputCap()),
                        1,
                        MAX_PAGE);
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        String id = args.requiredString("session_id");
        String export = args.optionalString("export");
        Long entry = args.integer("entry", 0, Integer.MAX_VALUE);
        if (export != null) {
            if (!export.equals(RLM_JSONL)) {
                throw RlmException.invalid(
                        "export",
                        "export is '" + export + "', not a known format",
                        "pass export: \"" + RLM_JSONL + "\" with the entry holding an RLM run");
            }
            return export(
                    sessions.get(id),
                    entry,
                    args.integer("offset", 0, Schema.MAX_INTEGER),
                    args.integer("max_chars", 1, MAX_PAGE));
        }
        if (entry != null) {
            throw RlmException.invalid(
                    "entry",
                    "entry is for export",
                    "pass export: \"" + RLM_JSONL + "\" with it, or start and end to list entries");
        }
        Long start = args.integer("start", 0, Integer.MAX_VALUE);
        Long end = args.integer("end", 0, Integer.MAX_VALUE);
        return Replies.trace(sessions.get(id)
                .trace(start == null ? 0 : start.intValue(), end == null ? Integer.MAX_VALUE : end.intValue()));
    }

    /** One page of an entry's run as JSONL. */
    private ObjectNode export(Session session, Long entry, Long offsetArg, Long maxCharsArg) {
        if (entry == null) {
            throw RlmException.invalid(
                    "entry", "export needs the entry holding the run", "pass entry; " + runs(session));
        }
        JsonNode found = Replies.trace(session.trace(entry.intValue(), entry.intValue() + 1))
                .path("steps")
                .path(0);
        if (found.path("index").asLong(-1) != entry || !TrajectoryJsonl.exportable(found)) {
            throw RlmException.invalid(
                    "entry",
                    found.isMissingNode()
                            ? "the trace keeps no entry " + entry
                            : "entry " + entry + " (" + found.path("kind").asText() + ") holds no RLM run",
                    "pick one: " + runs(session));
        }
        String text = TrajectoryJsonl.text(found);
        long offset = Math.min(offsetArg == null ? 0 : offsetArg, text.length());
        long maxChars = maxCharsArg == null ? sessions.settings().outputCap() : maxCharsArg;
        int end = (int) Math.min(text.length(), offset + maxChars);
        ObjectNode reply = sessions.json()
                .createObjectNode()
                .put("session_id", session.id())
                .put("entry", entry)
                .put("format", RLM_JSONL)
                .put("jsonl", text.substring((int) offset, end))
                .put("offset", offset)
                .put("returned_chars", end - offset)
                .put("total_chars", text.length());
        return end < text.length() ? reply.put("next_offset", end) : reply.putNull("next_offset");
    }

    /** Which entries hold a run, for an error's fix. */
    private static String runs(Session session) {
        List<Integer> runs = new ArrayList<>();
        Replies.trace(session.trace(0, Integer.MAX_VALUE)).path("steps").forEach(step -> {
            if (TrajectoryJsonl.exportable(step)) {
                runs.add(step.path("index").asInt());
            }
        });
        return runs.isEmpty() ? "this session's trace holds no RLM run yet" : "entries holding a run: " + runs;
    }
}

package dev.rlmmcp.tools.session;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.Replies;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;

/** rlm_get_var: a variable's value, rendered for a model and paged. */
public final class GetVarTool implements RlmTool {

    private static final long MAX_PAGE = 1_000_000;

    private final Sessions sessions;

    public GetVarTool(Sessions sessions) {
        this.sessions = sessions;
    }

    @Override
    public String name() {
        return "rlm_get_var";
    }

    @Override
    public String description() {
        return """
                Read a variable's value: a str as itself, values that serialise as JSON, else repr; very large \
                values as a preview. Long renderings are paged: offset and max_chars in characters; the reply \
                gives total_chars and next_offset (null at the end).""";
    }

    @Override
    public Schema schema() {
        return Schema.object()
                .string("session_id", "The session.", true)
                .string("var_name", "The variable.", true)
                .integer("offset", "First character to return (default 0).", 0, Schema.MAX_INTEGER)
                .integer(
                        "max_chars",
                        "Most characters to return (default %d)."
                                .formatted(sessions.settings().outputCap()),
                        1,
                        MAX_PAGE);
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        String id = args.requiredString("session_id");
        String name = args.requiredString("var_name");
        Long offset = args.integer("offset", 0, Schema.MAX_INTEGER);
        Long maxChars = args.integer("max_chars", 1, MAX_PAGE);
        return Replies.answer(sessions.get(id)
                .getVar(
                        name,
                        offset == null ? 0 : offset,
                        maxChars == null ? sessions.settings().outputCap() : maxChars));
    }
}

package dev.rlmmcp.tools.repl;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.Replies;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;

/** rlm_memory: how much the session's variables take, against its limit, and the kernel's RSS. */
public final class MemoryTool implements RlmTool {

    private final Sessions sessions;

    public MemoryTool(Sessions sessions) {
        this.sessions = sessions;
    }

    @Override
    public String name() {
        return "rlm_memory";
    }

    @Override
    public String description() {
        return """
                Memory use of the REPL: total size of the variables, variable count, the session's limit and \
                percent used, and the kernel process's resident memory. Past %s of the limit the least recently \
                used variables are dropped.""".formatted(Math.round(sessions.settings().cleanupThreshold() * 100) + "%");
    }

    @Override
    public Schema schema() {
        return Schema.object().sessionId();
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        return Replies.answer(
                sessions.resolve(args.sessionId(), caller.connection()).memory());
    }
}

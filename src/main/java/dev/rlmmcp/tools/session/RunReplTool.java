package dev.rlmmcp.tools.session;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.HostCallbacks;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.StepExtras;
import dev.rlmmcp.core.StepRequest;
import dev.rlmmcp.rlm.RlmRuns;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.Replies;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;

/** rlm_run_repl: one step of an RLM session. */
public final class RunReplTool implements RlmTool {

    private final Sessions sessions;

    private final RlmRuns runs;

    public RunReplTool(Sessions sessions, RlmRuns runs) {
        this.sessions = sessions;
        this.runs = runs;
    }

    @Override
    public String name() {
        return "rlm_run_repl";
    }

    @Override
    public String description() {
        return """
                Run one step of Python code in a session made by rlm_init_context. Variables persist between \
                steps; print only small results. Reply as for rlm_execute; [guardrail max_steps | timeout | \
                budget_exceeded: ...] when a limit is hit.""";
    }

    @Override
    public Schema schema() {
        return Schema.object()
                .string("session_id", "The id returned by rlm_init_context.", true)
                .string("code", "Python source to execute.", true);
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        String id = args.requiredString("session_id");
        String code = args.requiredString("code");
        Session session = sessions.get(id);
        return Replies.outcome(
                runs.execute(
                        session,
                        new StepRequest(
                                code,
                                session.defaultStepTimeout(),
                                StepExtras.of(caller.sampling(), HostCallbacks.NONE, null),
                                caller.context())),
                sessions.settings());
    }

    @Override
    public boolean isError(ObjectNode reply) {
        String status = reply.path("status").asText();
        return !"ok".equals(status) && !"suspended".equals(status);
    }
}

package dev.rlmmcp.tools.repl;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.HostCallbacks;
import dev.rlmmcp.core.KernelSettings;
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
import java.time.Duration;

/** rlm_execute: run Python code in the session's persistent REPL. */
public final class ExecuteTool implements RlmTool {

    private final Sessions sessions;
    private final KernelSettings settings;

    private final RlmRuns runs;

    public ExecuteTool(Sessions sessions, RlmRuns runs) {
        this.sessions = sessions;
        this.runs = runs;
        this.settings = sessions.settings();
    }

    @Override
    public String name() {
        return "rlm_execute";
    }

    @Override
    public String description() {
        return """
                Run Python code in a persistent REPL; variables persist between calls. Data loaded with \
                rlm_load_* lives in variables: inspect it with code (len, slices, regex, counters) and print \
                only small results. A bare expression on the last line is printed, as at a prompt. Output past \
                %d characters is cut (the rest stays in _last_output). Code running past timeout_s is \
                interrupted with variables intact. Reply: the output as printed (a short traceback on error), \
                then a [footer] of what changed: variables set or deleted, output cut, evictions, guardrails. Without a \
                model API, llm_query/rlm_query in the code suspend the step: answer them with rlm_answer.""".formatted(settings.outputCap());
    }

    @Override
    public Schema schema() {
        return Schema.object()
                .string("code", "Python source to execute.", true)
                .integer(
                        "timeout_s",
                        "Seconds before the code is interrupted (default: the session's, else %d)."
                                .formatted(settings.defaultTimeout().toSeconds()),
                        1,
                        settings.maxTimeout().toSeconds())
                .sessionId();
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        String code = args.requiredString("code");
        Long timeout = args.integer("timeout_s", 1, settings.maxTimeout().toSeconds());
        Session session = sessions.resolve(args.sessionId(), caller.connection());
        return Replies.outcome(
                runs.execute(
                        session,
                        new StepRequest(
                                code,
                                timeout == null ? session.defaultStepTimeout() : Duration.ofSeconds(timeout),
                                StepExtras.of(caller.sampling(), HostCallbacks.NONE, null),
                                caller.context())),
                settings);
    }

    @Override
    public boolean isError(ObjectNode reply) {
        String status = reply.path("status").asText();
        return !"ok".equals(status) && !"suspended".equals(status);
    }
}

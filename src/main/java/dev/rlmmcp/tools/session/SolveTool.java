package dev.rlmmcp.tools.session;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.DataType;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.data.DataRoot;
import dev.rlmmcp.data.DataSources;
import dev.rlmmcp.llm.LlmException;
import dev.rlmmcp.llm.LlmService;
import dev.rlmmcp.rlm.RlmRuns;
import dev.rlmmcp.rlm.RunLimits;
import dev.rlmmcp.rlm.RunOptions;
import dev.rlmmcp.rlm.RunOutcome;
import dev.rlmmcp.rlm.RunProgress;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * rlm_solve: the RLM loop run by the server on a question, over a session's variables or a context
 * loaded for it into a new session, until the model answers or a limit stops it.
 */
public final class SolveTool implements RlmTool {

    private final Sessions sessions;
    private final RlmRuns runs;
    private final DataRoot dataRoot;
    private final DataSources sources;

    public SolveTool(Sessions sessions, RlmRuns runs, DataRoot dataRoot, DataSources sources) {
        this.sessions = sessions;
        this.runs = runs;
        this.dataRoot = dataRoot;
        this.sources = sources;
    }

    @Override
    public String name() {
        return "rlm_solve";
    }

    /** With no model API, the run's model is the client's: a client that does not sample is not offered it. */
    @Override
    public boolean needsSampling() {
        return sessions.llm().solverModel() == LlmService.SolverModel.CLIENT_SAMPLING;
    }

    @Override
    public String description() {
        RunLimits d = runs.config().defaults();
        return """
                Answer a question with a Recursive Language Model run by the server (needs a model API or a \
                client that samples): a model writes Python over `context`, calling llm_query and rlm_query on \
                parts of it. context: {"text"} | {"file": path in the data root} | {"s3": {"bucket", "key"}} | \
                {"url"}, or session_id's variables. Limits (default depth %d, %d iterations per RLM, %s) stop \
                the run with its best answer. Reply: answer, stop reason, figures, trace entry.""".formatted(
                        d.maxDepth(),
                        d.maxIterations(),
                        d.maxTime() == null ? "no time limit" : d.maxTime().toSeconds() + " s");
    }

    @Override
    public Schema schema() {
        Schema schema = Schema.object()
                .string("question", "What to answer about the context.", true)
                .nested(
                        "context",
                        "Data for a new session's `context`: one of text, file, s3, url; data_type parses it.",
                        contextSourceProperties(),
                        false)
                .string("session_id", "A session whose variables are the context (instead of context).", false)
                .string("model", "Model of the run (default: the server's).", false);
        return withRunLimits(schema);
    }

    /** The properties of the context object: where the data comes from and how to parse it. */
    private Map<String, Object> contextSourceProperties() {
        return Schema.ordered(
                "text", Schema.ordered("type", "string", "description", "The context itself."),
                "file", Schema.ordered("type", "string", "description", "A path relative to the data root."),
                "s3",
                        Schema.ordered(
                                "type",
                                "object",
                                "description",
                                "An S3 object (default bucket: the server's).",
                                "properties",
                                Schema.ordered(
                                        "bucket", Schema.ordered("type", "string"),
                                        "key", Schema.ordered("type", "string")),
                                "required",
                                List.of("key"),
                                "additionalProperties",
                                false),
                "url", Schema.ordered("type", "string", "description", "An http(s) URL."),
                "data_type", Schema.ordered("type", "string", "enum", DataType.wireNames()));
    }

    /** The run's limits, added to {@code schema}. */
    private Schema withRunLimits(Schema schema) {
        RunLimits d = runs.config().defaults();
        return schema.integer("max_depth", "Deepest rlm_query nesting (default %d).".formatted(d.maxDepth()), 1, 16)
                .integer("max_iterations", "Model turns per RLM (default %d).".formatted(d.maxIterations()), 1, 10_000)
                .integer(
                        "max_children",
                        "Child RLMs in the run (default %s)."
                                .formatted(d.maxChildren() == null ? "no limit" : d.maxChildren()),
                        0,
                        1_000_000)
                .integer(
                        "max_time_s",
                        "Seconds for the run (default %s)."
                                .formatted(
                                        d.maxTime() == null
                                                ? "no limit"
                                                : d.maxTime().toSeconds()),
                        1,
                        7 * 86_400)
                .integer(
                        "max_input_tokens",
                        "Input tokens in the run (default %s)."
                                .formatted(d.maxInputTokens() == null ? "no limit" : d.maxInputTokens()),
                        1,
                        Schema.MAX_INTEGER)
                .integer(
                        "max_output_tokens",
                        "Output tokens in the run (default %s)."
                                .formatted(d.maxOutputTokens() == null ? "no limit" : d.maxOutputTokens()),
                        1,
                        Schema.MAX_INTEGER)
                .number(
                        "max_cost_usd",
                        "USD for the run, by the server's prices (default %s)."
                                .formatted(d.maxCostUsd() == null ? "no limit" : d.maxCostUsd()),
                        0)
                .integer(
                        "max_consecutive_errors",
                        "Failed turns in a row that stop an RLM (default %d).".formatted(d.maxConsecutiveErrors()),
                        1,
                        1000);
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        String question = args.requiredString("question");
        if (question.isBlank()) {
            throw RlmException.invalid("question", "question is empty", "pass the question to answer as a string");
        }
        String sessionId = args.sessionId();
        Map<String, Object> given = args.object("context", "pass context as an object: " + ContextSource.SHAPE);
        ContextSource source = given == null ? null : ContextSource.of(given, "context");
        if (source != null && sessionId != null) {
            throw RlmException.invalid(
                    "context",
                    "rlm_solve got both session_id and context",
                    "pass session_id to work on that session's variables, or context to load data into a new session");
        }
        RunOptions options = new RunOptions(
                args.optionalString("model"), limits(args, runs.config().defaults()));
        try {
            sessions.llm().backendFor(caller.sampling()); // before any data is loaded for a run that cannot start
        } catch (LlmException e) {
            throw new RlmException(
                    ErrorCode.NOT_CONFIGURED,
                    "rlm_solve needs a model: " + e.getMessage(),
                    null,
                    "set RLM_LLM_BASE_URL, RLM_LLM_MODEL (and RLM_LLM_API_KEY if needed) where the server starts, "
                            + "or call from a client that offers MCP sampling");
        }
        Session session =
                source == null ? sessions.resolve(sessionId, caller.connection()) : loaded(source, caller.context());
        return solve(runs, session, question, options, caller.sampling(), caller.context());
    }

    /** A new session with {@code source} loaded as its context; a load that fails leaves no session behind. */
    private Session loaded(ContextSource source, CallContext context) {
        Session session = sessions.create(
                ContextSource.VARIABLE,
                sessions.defaultLimits(),
                sessions.llm().defaults(),
                context.offeredSessionId());
        try {
            source.load(session, dataRoot, sources, "context", context);
            return session;
        } catch (RlmException e) {
            sessions.delete(session.id());
            // the loaders name their own argument (path, key, url): here it is context
            throw new RlmException(e.code(), e.getMessage(), "context", e.fix());
        } catch (RuntimeException e) {
            sessions.delete(session.id());
            throw e;
        }
    }

    /**
     * Runs the root loop on {@code session}, telling {@code context} its progress (which progress
     * notifications show), and answers with the outcome and the trace entry of its trajectory.
     */
    public static ObjectNode solve(
            RlmRuns runs,
            Session session,
            String question,
            RunOptions options,
            dev.rlmmcp.llm.LlmBackend sampling,
            CallContext context) {
        int before = session.trace(0, 0).traceLength();
        RunProgress progress =
                (figures, iteration, depth) -> context.status(RunReport.status(figures, iteration, depth));
        RunOutcome outcome = runs.solve(session, question, options, sampling, progress, context);
        return RunReport.reply(session.id(), outcome, traceEntry(session, before));
    }

    /** The index of the last "rlm" entry the run added to the session's trace, or null. */
    public static Integer traceEntry(Session session, int from) {
        List<Map<String, Object>> entries =
                session.trace(from, Integer.MAX_VALUE).steps();
        Integer found = null;
        for (Map<String, Object> entry : entries) {
            if ("rlm".equals(entry.get("kind")) && entry.get("index") instanceof Integer index) {
                found = index;
            }
        }
        return found;
    }

    /** The server's defaults, with what the call names instead. */
    static RunLimits limits(Args args, RunLimits d) {
        Long depth = args.integer("max_depth", 1, 16);
        Long iterations = args.integer("max_iterations", 1, 10_000);
        Long children = args.integer("max_children", 0, 1_000_000);
        Long time = args.integer("max_time_s", 1, 7 * 86_400);
        Long input = args.integer("max_input_tokens", 1, Schema.MAX_INTEGER);
        Long output = args.integer("max_output_tokens", 1, Schema.MAX_INTEGER);
        Double cost = args.number("max_cost_usd", 0);
        Long errors = args.integer("max_consecutive_errors", 1, 1000);
        return new RunLimits(
                depth == null ? d.maxDepth() : depth.intValue(),
                iterations == null ? d.maxIterations() : iterations.intValue(),
                children == null ? d.maxChildren() : Integer.valueOf(children.intValue()),
                time == null ? d.maxTime() : Duration.ofSeconds(time),
                input == null ? d.maxInputTokens() : input,
                output == null ? d.maxOutputTokens() : output,
                cost == null ? d.maxCostUsd() : cost,
                errors == null ? d.maxConsecutiveErrors() : errors.intValue(),
                d.outputCap(),
                d.compactAt(),
                d.concurrency());
    }
}

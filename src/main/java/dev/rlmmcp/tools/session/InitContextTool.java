package dev.rlmmcp.tools.session;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.DataType;
import dev.rlmmcp.core.Limits;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.llm.LlmLimits;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.Replies;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;
import java.time.Duration;

/** rlm_init_context: a new session with its guardrails, its context loaded into a variable. */
public final class InitContextTool implements RlmTool {

    private final Sessions sessions;

    public InitContextTool(Sessions sessions) {
        this.sessions = sessions;
    }

    @Override
    public String name() {
        return "rlm_init_context";
    }

    @Override
    public String description() {
        return """
                Start an RLM session: a fresh persistent Python REPL with guardrails, the context loaded into a \
                variable (default: context). Returns session_id (for every REPL tool), what was loaded and the \
                limits: max_steps, max_runtime_ms (code runtime), budget_limit (bytes of code, output and data); \
                llm_* bound the session's llm_query calls.""";
    }

    @Override
    public Schema schema() {
        Schema schema = Schema.object()
                .string("context_text", "The context to load (or load later with rlm_load_*).", false)
                .string("name", "Its variable (default: context).", false)
                .choice("data_type", "How to parse context_text.", DataType.wireNames(), "text");
        return withLlmLimits(withSessionLimits(schema));
    }

    /** The session's guardrails and per-step timeout, added to {@code schema}. */
    private Schema withSessionLimits(Schema schema) {
        return schema.integer("max_steps", "Most code steps (default: the server's).", 1, Integer.MAX_VALUE)
                .integer(
                        "max_runtime_ms",
                        "Most total code runtime in ms (default: the server's).",
                        1,
                        Schema.MAX_INTEGER)
                .integer(
                        "budget_limit",
                        "Most bytes of code, output and data (default: the server's).",
                        1,
                        Schema.MAX_INTEGER)
                .integer(
                        "timeout_s",
                        "Per-step timeout in seconds (default %d)."
                                .formatted(sessions.settings().defaultTimeout().toSeconds()),
                        1,
                        sessions.settings().maxTimeout().toSeconds());
    }

    /** The bounds on the session's llm_query calls, added to {@code schema}. */
    private Schema withLlmLimits(Schema schema) {
        LlmLimits llm = sessions.llm().defaults();
        return schema.integer(
                        "llm_max_calls",
                        "llm_query calls in the session (default %d).".formatted(llm.maxCalls()),
                        1,
                        Integer.MAX_VALUE)
                .integer(
                        "llm_max_calls_per_step",
                        "llm_query calls per step (default %d).".formatted(llm.maxCallsPerStep()),
                        1,
                        Integer.MAX_VALUE)
                .integer(
                        "llm_max_concurrency",
                        "llm_query calls at once (default %d).".formatted(llm.maxConcurrent()),
                        1,
                        256)
                .integer(
                        "llm_max_prompt_chars",
                        "Largest llm_query prompt in chars (default %d).".formatted(llm.maxPromptChars()),
                        1,
                        Integer.MAX_VALUE)
                .integer(
                        "llm_token_budget",
                        "llm_query tokens in the session (default: %s)."
                                .formatted(llm.tokenBudget() == null ? "none" : llm.tokenBudget()),
                        1,
                        Schema.MAX_INTEGER)
                .integer(
                        "llm_timeout_s",
                        "Seconds per llm_query call (default %d)."
                                .formatted(llm.callTimeout().toSeconds()),
                        1,
                        3600);
    }

    private LlmLimits llmLimits(Args args) {
        LlmLimits d = sessions.llm().defaults();
        Long calls = args.integer("llm_max_calls", 1, Integer.MAX_VALUE);
        Long perStep = args.integer("llm_max_calls_per_step", 1, Integer.MAX_VALUE);
        Long concurrency = args.integer("llm_max_concurrency", 1, 256);
        Long promptChars = args.integer("llm_max_prompt_chars", 1, Integer.MAX_VALUE);
        Long tokens = args.integer("llm_token_budget", 1, Schema.MAX_INTEGER);
        Long timeout = args.integer("llm_timeout_s", 1, 3600);
        return new LlmLimits(
                perStep == null ? d.maxCallsPerStep() : Integer.valueOf(perStep.intValue()),
                calls == null ? d.maxCalls() : Integer.valueOf(calls.intValue()),
                concurrency == null ? d.maxConcurrent() : concurrency.intValue(),
                promptChars == null ? d.maxPromptChars() : promptChars.intValue(),
                tokens == null ? d.tokenBudget() : tokens,
                timeout == null ? d.callTimeout() : Duration.ofSeconds(timeout),
                d.maxDepth());
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        String text = args.optionalString("context_text");
        String variable = args.optionalString("name") != null ? args.variableName("name") : "context";
        DataType type = args.dataType("data_type");
        long maxTimeout = sessions.settings().maxTimeout().toSeconds();
        Long maxSteps = args.integer("max_steps", 1, Integer.MAX_VALUE);
        Long timeout = args.integer("timeout_s", 1, maxTimeout);
        Long maxRuntime = args.integer("max_runtime_ms", 1, Schema.MAX_INTEGER);
        Long budget = args.integer("budget_limit", 1, Schema.MAX_INTEGER);
        Limits defaults = sessions.defaultLimits();
        Limits limits = new Limits(
                maxSteps == null ? defaults.maxSteps() : Integer.valueOf(maxSteps.intValue()),
                maxRuntime == null ? defaults.maxRuntimeMs() : maxRuntime,
                budget == null ? defaults.budgetBytes() : budget,
                timeout == null ? null : Duration.ofSeconds(timeout));
        if (text == null && args.optionalString("data_type") != null) {
            throw RlmException.invalid(
                    "data_type",
                    "data_type was given without context_text",
                    "pass context_text too, or load data later with rlm_load_data / rlm_load_file");
        }
        Session session = sessions.create(
                variable, limits, llmLimits(args), caller.context().offeredSessionId());
        ObjectNode body = Replies.summary(session.summary());
        if (text != null) {
            try {
                body.set(
                        "context",
                        Replies.load(session.loadData(variable, text, type, caller.context()), sessions.settings()));
            } catch (RlmException e) {
                sessions.delete(session.id());
                throw e;
            }
        }
        return body;
    }
}

package dev.rlmmcp.rlm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.AgentSteps;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.StepExtras;
import dev.rlmmcp.core.StepOutcome;
import dev.rlmmcp.core.StepRequest;
import dev.rlmmcp.core.Variable;
import dev.rlmmcp.llm.AgentBackend;
import dev.rlmmcp.llm.LlmAnswer;
import dev.rlmmcp.llm.LlmBackend;
import dev.rlmmcp.llm.LlmException;
import dev.rlmmcp.llm.LlmRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * RLM runs: the root loop of rlm_solve and {@code rlm-mcp ask}, and the child RLMs that rlm_query
 * starts from any session's code. Every run, with its children, is kept in its session's trace.
 */
public final class RlmRuns {

    /** What every RLM of a run works with: where child sessions come from, JSON, and the model's backend. */
    record Env(Sessions sessions, ObjectMapper json, LlmBackend backend) {}

    private static final int VARIABLES_LISTED = 20;

    private final Sessions sessions;
    private final RlmConfig config;
    private final ObjectMapper json;
    private final AgentTrees agentTrees = new AgentTrees();

    public RlmRuns(Sessions sessions, RlmConfig config) {
        this.sessions = sessions;
        this.config = config;
        this.json = sessions.json();
    }

    public RlmConfig config() {
        return config;
    }

    /**
     * Runs the RLM loop on {@code question} with {@code session} as the root RLM's REPL (its variables,
     * {@code context} among them if it has one, are what the model works on), until the model answers or
     * a limit stops it. Cancelling {@code context} stops the run and every child within a second. The
     * run's trajectory is appended to the session's trace as an entry of kind "rlm".
     *
     * @param clientSampling the calling client's MCP sampling (null if none): the backend when the
     *                       server's LLM mode picks it, as for llm_query
     */
    public RunOutcome solve(
            Session session,
            String question,
            RunOptions options,
            LlmBackend clientSampling,
            RunProgress progress,
            CallContext context) {
        LlmBackend backend = backend(clientSampling);
        RunLimits limits = options.limits() != null ? options.limits() : config.defaults();
        Run run = new Run(limits, config, progress);
        session.beginLoop();
        String info = describe(session);
        long t0 = System.nanoTime();
        Trajectory.Node root;
        try (CallContext.Registration cancel = context.onCancel(run::cancel)) {
            root = new RlmLoop(
                            new Env(sessions, json, backend),
                            run,
                            session,
                            "root",
                            0,
                            question,
                            options.model(),
                            info,
                            null)
                    .run();
        }
        String stoppedBy = root.ready() ? null : root.stoppedBy();
        String message = null;
        if (stoppedBy != null && stoppedBy.startsWith("error: ")) {
            message = stoppedBy.substring("error: ".length());
            stoppedBy = "error";
        } else if (stoppedBy != null) {
            message = run.stopMessage() != null ? run.stopMessage() : "the root RLM stopped (" + stoppedBy + ")";
        }
        RunOutcome outcome = new RunOutcome(run.id, root.answer(), root.ready(), stoppedBy, message, run.figures());
        Trajectory trajectory = new Trajectory(
                run.id, question, root.model(), backend.name(), limits, run.started.toString(), outcome, root);
        session.recordRun(
                question,
                root.ready() ? "answered" : "stopped: " + stoppedBy,
                root.answer(),
                (System.nanoTime() - t0) / 1e6,
                TraceBudget.fit(json.valueToTree(trajectory)));
        return outcome;
    }

    /**
     * Runs an agent's step whose code may call rlm_query: each call starts child RLMs under a run of its
     * own (the server's default limits) with this session as their root; their trees go into the step's
     * trace entry. Other requests go where the request's extras send them. Where the calling agent is
     * the model ({@link dev.rlmmcp.llm.LlmService#agentAnswers}), the step's sub-calls are the agent's to
     * answer, and the step suspends while it waits for them ({@link AgentSteps}).
     */
    public StepOutcome execute(Session session, StepRequest request) {
        StepExtras extras = request.extras();
        String lost = session.agentSteps().takeLostAtStop();
        if (sessions.llm().agentAnswers(extras.clientSampling())) {
            return agentStep(session, request, lost);
        }
        Run run = new Run(config.defaults(), config, RunProgress.NONE);
        List<Trajectory.SubCall> calls = new ArrayList<>();
        ChildRuns children = new ChildRuns(
                new Env(sessions, json, lazyBackend(extras.clientSampling())),
                run,
                null,
                session,
                0,
                null,
                recorder(calls),
                extras.callbacks());
        try (children) {
            return new StepOutcome.Done(
                    session.execute(request.with(extras.withRlm(children, () -> stepTrace(run, calls)))),
                    lostNotice(lost));
        }
    }

    /** A step whose sub-calls the agent answers: in a child session, counted in the tree that made it. */
    private StepOutcome agentStep(Session session, StepRequest request, String lost) {
        StepExtras extras = request.extras();
        AgentTrees.Tree known = agentTrees.of(session.id());
        AgentTrees.Tree tree =
                known != null ? known : new AgentTrees.Tree(new Run(config.defaults(), config, RunProgress.NONE), 0);
        AgentBackend agent = sessions.llm()
                .agent(session.agentSteps().calls())
                .within(() -> tree.run().timeLeft(null));
        StepOutcome outcome = session.agentSteps()
                .run(
                        context -> {
                            List<Trajectory.SubCall> calls = new ArrayList<>();
                            Env env = new Env(sessions, json, agent);
                            ChildRuns atLimit = new ChildRuns(
                                    env,
                                    tree.run(),
                                    null,
                                    session,
                                    tree.depth(),
                                    null,
                                    recorder(calls),
                                    extras.callbacks());
                            AgentChildRuns children =
                                    new AgentChildRuns(env, tree, session, agent, recorder(calls), atLimit, agentTrees);
                            try (atLimit;
                                    children) {
                                StepExtras asAgent = new StepExtras(
                                        null,
                                        agent,
                                        tree.depth(),
                                        children,
                                        extras.mcp(),
                                        false,
                                        () -> stepTrace(tree.run(), calls));
                                return session.execute(
                                        new StepRequest(request.code(), request.timeout(), asAgent, context));
                            }
                        },
                        request.context());
        return outcome instanceof StepOutcome.Done done && lost != null
                ? new StepOutcome.Done(done.result(), lostNotice(lost))
                : outcome;
    }

    private static Consumer<Trajectory.SubCall> recorder(List<Trajectory.SubCall> calls) {
        return call -> {
            synchronized (calls) {
                calls.add(call);
            }
        };
    }

    /** What the reply says of a step that waited for the agent when the server last stopped, or null. */
    private static String lostNotice(String lost) {
        return lost == null
                ? null
                : "a step that waited for your answers" + (lost.isEmpty() ? "" : " to " + lost)
                        + " was lost when the server stopped; the variables are as the step before it left them";
    }

    private JsonNode stepTrace(Run run, List<Trajectory.SubCall> calls) {
        synchronized (calls) {
            if (calls.isEmpty()) {
                return null;
            }
            ObjectNode tree = json.createObjectNode().put("run_id", run.id);
            tree.set("figures", json.valueToTree(run.figures()));
            tree.set("calls", json.valueToTree(calls));
            return TraceBudget.fit(tree);
        }
    }

    private LlmBackend backend(LlmBackend clientSampling) {
        try {
            return sessions.llm().backendFor(clientSampling);
        } catch (LlmException e) {
            throw new RlmException(
                    ErrorCode.NOT_CONFIGURED,
                    "an RLM run needs a model: " + e.getMessage(),
                    null,
                    "set RLM_LLM_BASE_URL, RLM_LLM_MODEL (and RLM_LLM_API_KEY if needed) where the server starts, "
                            + "or use a client that offers MCP sampling");
        }
    }

    /** The backend for a step's children, or one that refuses each call with why there is none. */
    private LlmBackend lazyBackend(LlmBackend clientSampling) {
        try {
            return sessions.llm().backendFor(clientSampling);
        } catch (LlmException e) {
            return new LlmBackend() {
                @Override
                public String name() {
                    return "none";
                }

                @Override
                public LlmAnswer complete(LlmRequest request, Duration timeout) throws LlmException {
                    throw new LlmException(e.code(), e.getMessage());
                }
            };
        }
    }

    /** What the first message says of the root's data: its {@code context}, else the session's variables. */
    private static String describe(Session session) {
        List<Variable> vars = session.listVars().body().variables().stream()
                .filter(v -> !"answer".equals(v.name()) && !"history".equals(v.name()))
                .toList();
        for (Variable v : vars) {
            if ("context".equals(v.name())) {
                return LoopPrompt.describe(v.type(), v.length(), v.preview());
            }
        }
        if (vars.isEmpty()) {
            return null;
        }
        return "There is no `context` variable; the session's variables are the context: "
                + vars.stream()
                        .limit(VARIABLES_LISTED)
                        .map(v ->
                                v.name() + " (" + v.type() + (v.length() == null ? "" : ", length " + v.length()) + ")")
                        .collect(Collectors.joining(", "))
                + (vars.size() > VARIABLES_LISTED ? ", and " + (vars.size() - VARIABLES_LISTED) + " more" : "") + ".";
    }
}

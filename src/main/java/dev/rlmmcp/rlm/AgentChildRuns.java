package dev.rlmmcp.rlm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.CallbackRefused;
import dev.rlmmcp.core.HostCallbacks;
import dev.rlmmcp.core.Limits;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.llm.AgentBackend;
import dev.rlmmcp.llm.LlmException;
import dev.rlmmcp.llm.PendingCalls;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * rlm_query where the calling agent is the model. Each prompt gets a child session, made and listed like
 * any other, its {@code context} variable loaded from the value the code passed, at depth d + 1; the
 * agent (or a sub-agent of its own) works there with the usual tools and answers the request with a
 * variable of that session or a text, and that session's own sub-calls come back to the agent the same
 * way. Past the depth limit a call is answered as a plain sub-call ({@code atLimit}). The batch is asked
 * whole; the child sessions are deleted when the step that made them ends.
 */
final class AgentChildRuns implements HostCallbacks, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(AgentChildRuns.class);

    private final RlmRuns.Env env;
    private final Run run;
    private final Session parent;
    private final int depth;
    private final AgentBackend agent;
    private final Consumer<Trajectory.SubCall> recorder;
    private final HostCallbacks atLimit;
    private final AgentTrees trees;
    private final ContextFiles files;
    private final List<Session> made = new ArrayList<>();

    AgentChildRuns(
            RlmRuns.Env env,
            AgentTrees.Tree tree,
            Session parent,
            AgentBackend agent,
            Consumer<Trajectory.SubCall> recorder,
            HostCallbacks atLimit,
            AgentTrees trees) {
        this.env = env;
        this.run = tree.run();
        this.depth = tree.depth();
        this.parent = parent;
        this.agent = agent;
        this.recorder = recorder;
        this.atLimit = atLimit;
        this.trees = trees;
        this.files = new ContextFiles(parent.writableDir());
    }

    @Override
    public JsonNode handle(String kind, JsonNode request) throws CallbackRefused, InterruptedException {
        if (!"rlm".equals(kind) || depth + 1 >= run.limits.maxDepth()) {
            return atLimit.handle(kind, request);
        }
        JsonNode prompts = request.path("prompts");
        if (!prompts.isArray() || prompts.isEmpty()) {
            throw new CallbackRefused("INVALID_ARGUMENT", "prompts must be a non-empty list of str");
        }
        JsonNode contexts = request.path("contexts");
        List<ObjectNode> answers = new ArrayList<>();
        List<PendingCalls.Asked> asked = new ArrayList<>();
        List<Integer> askedAt = new ArrayList<>();
        for (int i = 0; i < prompts.size(); i++) {
            JsonNode context = contexts.isArray() && i < contexts.size() ? contexts.get(i) : null;
            answers.add(null);
            try {
                Session child = child(prompts.get(i).asText(), context);
                asked.add(new PendingCalls.Asked(prompts.get(i).asText(), null, child.id()));
                askedAt.add(i);
            } catch (LlmException e) {
                answers.set(i, error(e.code(), e.getMessage()));
            }
        }
        List<PendingCalls.Ticket> tickets =
                agent.ask("rlm", asked, request.path("printed").asText(null));
        try {
            for (int t = 0; t < tickets.size(); t++) {
                answers.set(askedAt.get(t), awaited(tickets.get(t), asked.get(t)));
            }
        } finally {
            agent.dropAll(tickets);
        }
        return ChildRuns.answered(env, request, answers);
    }

    /** A child session for one prompt, counted against the run's limits, with the context loaded. */
    private Session child(String prompt, JsonNode context) throws LlmException {
        if (!run.admitChild(depth + 1)) {
            StopReason why = run.stopped();
            throw new LlmException(
                    "LIMIT_EXCEEDED",
                    "no child RLM started: " + (why == null ? "the run has stopped" : run.stopMessage()));
        }
        Session child;
        try {
            child = env.sessions().create("rlm_query child of " + parent.id(), Limits.NONE, parent.llmLimits(), null);
        } catch (RlmException e) {
            run.childEnded();
            throw new LlmException("CHILD_FAILED", "the child session could not be made: " + e.getMessage());
        }
        synchronized (made) {
            made.add(child);
        }
        trees.add(child.id(), new AgentTrees.Tree(run, depth + 1));
        if (context != null && !context.isNull()) {
            try {
                load(child, context);
            } catch (LlmException e) {
                run.childEnded();
                throw e;
            }
        }
        return child;
    }

    private void load(Session child, JsonNode context) throws LlmException {
        try {
            if (context.path("file").isTextual()) {
                ChildRuns.load(child, files.take(context.path("file").asText()), null);
            } else if (context.path("inline").isTextual()) {
                ChildRuns.load(
                        child,
                        null,
                        Base64.getDecoder().decode(context.path("inline").asText()));
            }
        } catch (IOException | IllegalArgumentException e) {
            throw new LlmException("CONTEXT_UNREADABLE", "the context could not be handed over: " + e.getMessage());
        } catch (ChildRuns.ChildFailed e) {
            throw new LlmException(e.code, e.getMessage());
        }
    }

    private ObjectNode awaited(PendingCalls.Ticket ticket, PendingCalls.Asked asked) throws InterruptedException {
        long t0 = System.nanoTime();
        String answer = null;
        String failure = null;
        ObjectNode reply;
        try {
            answer = agent.await(ticket, null);
            reply = env.json().createObjectNode().put("text", answer);
        } catch (LlmException e) {
            failure = e.code() + ": " + e.getMessage();
            reply = error(e.code(), e.getMessage());
        } finally {
            run.childEnded();
        }
        recorder.accept(new Trajectory.SubCall(
                "rlm",
                asked.prompt(),
                answer,
                failure,
                "agent (session " + asked.childSession() + ")",
                0,
                0,
                null,
                Math.round((System.nanoTime() - t0) / 1e4) / 100.0,
                false,
                null));
        return reply;
    }

    private ObjectNode error(String code, String message) {
        ObjectNode answer = env.json().createObjectNode();
        answer.putObject("error").put("code", code).put("message", message);
        return answer;
    }

    /** Deletes the child sessions this step made (their answers are in), and the contexts handed over. */
    @Override
    public void close() {
        List<Session> children;
        synchronized (made) {
            children = List.copyOf(made);
            made.clear();
        }
        for (Session child : children) {
            trees.remove(child.id());
            try {
                env.sessions().delete(child.id());
            } catch (RuntimeException e) {
                log.debug("child session {} already gone: {}", child.id(), e.toString());
            }
        }
        files.close();
    }
}

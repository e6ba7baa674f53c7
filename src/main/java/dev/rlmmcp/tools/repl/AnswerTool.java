package dev.rlmmcp.tools.repl;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.AgentSteps;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.StepOutcome;
import dev.rlmmcp.core.VarPage;
import dev.rlmmcp.llm.PendingCalls;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.Replies;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * rlm_answer: the agent answers sub-calls its step suspended on (the agent is the model). Every answer
 * is checked before any is given, so a bad one loses nothing; when the step has every answer it waits
 * for, it goes on and the reply is the rest of the step, else the reply says what is still pending.
 */
public final class AnswerTool implements RlmTool {

    /** The longest answer taken from a child session's variable. */
    static final long MAX_ANSWER_CHARS = 1_000_000;

    private static final String FIX = "pass answers as [{\"id\": \"q1\", \"text\": \"...\"}], each with exactly one of "
            + "text, var (a variable of the request's child session) or error";

    private final Sessions sessions;

    public AnswerTool(Sessions sessions) {
        this.sessions = sessions;
    }

    @Override
    public String name() {
        return "rlm_answer";
    }

    @Override
    public String description() {
        return """
                Answer sub-calls (llm_query, rlm_query) a suspended step waits for, any subset by id; once all \
                are answered the reply is the rest of the step. error: the call raises LLMQueryError; cancel: \
                refuse all pending.""";
    }

    @Override
    public Schema schema() {
        return Schema.object()
                .objectList(
                        "answers",
                        "{id, text | var (rlm: a variable of its child session) | error}.",
                        Schema.ordered(
                                "id", Map.of("type", "string"),
                                "text", Map.of("type", "string"),
                                "var", Map.of("type", "string"),
                                "error", Map.of("type", "string")),
                        List.of("id"))
                .bool("cancel", "Refuse all pending.")
                .sessionId();
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        Session session = sessions.resolve(args.sessionId(), caller.connection());
        AgentSteps steps = session.agentSteps();
        List<Map<String, Object>> answers = args.objectList("answers", FIX);
        boolean cancel = args.flag("cancel");
        if (answers.isEmpty() && !cancel) {
            throw RlmException.invalid("answers", "rlm_answer needs answers or cancel: true", FIX);
        }
        List<PendingCalls.Reply> replies = new ArrayList<>(check(session, steps.calls(), answers));
        PendingCalls.Given given = steps.calls().give(replies);
        if (cancel) {
            PendingCalls.Given rest =
                    steps.calls().refuseAll("CANCELLED", "the agent gave this call up (rlm_answer cancel)");
            given = new PendingCalls.Given(given.closed() + rest.closed(), rest.openAfter());
        }
        if (given.closed() == 0) {
            throw new RlmException(
                    ErrorCode.NOT_FOUND,
                    "another call answered these requests first; nothing was given",
                    "answers",
                    "rlm_pending shows what the step still waits for");
        }
        if (!given.closedTheLast()) {
            // another call's answers closed the last one, or some are still open: that call gets the rest of the step
            ObjectNode reply = Replies.suspended(new StepOutcome.Suspended(session.id(), given.openAfter(), ""));
            reply.put("answered", given.closed());
            return reply;
        }
        return Replies.outcome(steps.resume(caller.context()), sessions.settings());
    }

    /** Each answer checked (its id open, exactly one of text, var, error), a var read: all or none are given. */
    private List<PendingCalls.Reply> check(Session session, PendingCalls calls, List<Map<String, Object>> answers) {
        Map<String, PendingCalls.Reply> given = new LinkedHashMap<>();
        List<String> unknown = new ArrayList<>();
        for (Map<String, Object> a : answers) {
            if (!(a.get("id") instanceof String id)) {
                throw RlmException.invalid("answers", "an answer has no id: " + a.keySet(), FIX);
            }
            PendingCalls.Call call = calls.call(id).orElse(null);
            if (call == null) {
                unknown.add(id);
                continue;
            }
            given.put(id, reply(call, a));
        }
        if (!unknown.isEmpty()) {
            List<PendingCalls.Call> open = calls.open();
            throw new RlmException(
                    ErrorCode.NOT_FOUND,
                    "no pending request " + String.join(", ", unknown) + " in session " + session.id()
                            + (open.isEmpty()
                                    ? " (nothing is pending there)"
                                    : "; pending: "
                                            + open.stream()
                                                    .map(PendingCalls.Call::id)
                                                    .collect(Collectors.joining(", ")))
                            + "; no answer was given",
                    "answers",
                    "answer the ids a suspended reply (or rlm_pending) lists, in the session it names");
        }
        return List.copyOf(given.values());
    }

    private PendingCalls.Reply reply(PendingCalls.Call call, Map<String, Object> a) {
        List<String> kinds = new ArrayList<>();
        for (String k : List.of("text", "var", "error")) {
            if (a.get(k) != null) {
                if (!(a.get(k) instanceof String)) {
                    throw RlmException.invalid("answers", call.id() + ": " + k + " must be a string", FIX);
                }
                kinds.add(k);
            }
        }
        if (kinds.size() != 1) {
            throw RlmException.invalid(
                    "answers",
                    call.id() + " has " + (kinds.isEmpty() ? "none" : String.join(" and ", kinds))
                            + " of text, var and error",
                    FIX);
        }
        return switch (kinds.getFirst()) {
            case "text" -> new PendingCalls.Reply(call.id(), (String) a.get("text"), null, null);
            case "error" -> new PendingCalls.Reply(call.id(), null, "REFUSED", (String) a.get("error"));
            default -> new PendingCalls.Reply(call.id(), variable(call, (String) a.get("var")), null, null);
        };
    }

    /** The value of {@code name} in the call's child session, as text. */
    private String variable(PendingCalls.Call call, String name) {
        if (call.childSession() == null) {
            throw RlmException.invalid(
                    "answers",
                    call.id() + " is an llm request, which has no child session to read " + name + " from",
                    "answer it with text");
        }
        VarPage page = sessions.get(call.childSession())
                .getVar(name, 0, MAX_ANSWER_CHARS)
                .body();
        if (page.nextOffset() != null) {
            throw RlmException.invalid(
                    "answers",
                    "%s: %s in session %s has %,d characters, more than an answer may (%,d)"
                            .formatted(call.id(), name, call.childSession(), page.totalChars(), MAX_ANSWER_CHARS),
                    "answer with a smaller variable, or text");
        }
        return page.value();
    }

    @Override
    public boolean isError(ObjectNode reply) {
        String status = reply.path("status").asText();
        return !"ok".equals(status) && !"suspended".equals(status);
    }
}

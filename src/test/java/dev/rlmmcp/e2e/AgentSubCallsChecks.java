package dev.rlmmcp.e2e;

import static dev.rlmmcp.e2e.AgentSubCallsClaudeCodeIT.SUBAGENTS;
import static dev.rlmmcp.e2e.AgentSubCallsClaudeCodeIT.resultBlock;
import static dev.rlmmcp.e2e.AgentSubCallsClaudeCodeIT.resultOf;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.AnthropicEndpoint;
import dev.rlmmcp.e2e.support.AnthropicEndpoint.Request;
import dev.rlmmcp.e2e.support.SubCallsTask;
import dev.rlmmcp.e2e.support.SubCallsTask.Pending;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.SoftAssertions;

/** What reached Claude Code's model in {@link AgentSubCallsClaudeCodeIT}, read from the recorded requests. */
final class AgentSubCallsChecks {

    private final SoftAssertions softly;
    private final SubCallsTask task;
    private final List<String> report;
    private final String testName;

    AgentSubCallsChecks(SoftAssertions softly, SubCallsTask task, List<String> report, String testName) {
        this.softly = softly;
        this.task = task;
        this.report = report;
        this.testName = testName;
    }

    /**
     * The first request offers the Agent tool. (Whether it names the rlm tools depends on how soon a stdio
     * server is up: one still starting is named there as "still connecting", and ToolSearch may find nothing
     * yet; the rlm calls made then work all the same, each result checked below.)
     */
    void offered(Request first) {
        List<String> tools = new ArrayList<>();
        first.body().path("tools").forEach(t -> tools.add(t.path("name").asText()));
        softly.assertThat(tools)
                .as("Claude Code's own tools in its first request")
                .contains("Agent", "ToolSearch");
    }

    /** The main agent's conversation at its last turn, and each sub-agent's at its own. */
    void mainAndSubagents(Request last, List<Request> subs) {
        for (int step = 1; step <= 9; step++) {
            int calls = step == 3 ? SubCallsTask.CHUNKS - SUBAGENTS : step == 5 ? SUBAGENTS : 1;
            for (int n = 0; n < calls; n++) {
                JsonNode block = resultBlock(last, "task", step, n);
                softly.assertThat(block)
                        .as("result of call %d of step %d", n, step)
                        .isNotNull();
                if (block != null) {
                    softly.assertThat(block.path("is_error").asBoolean(false))
                            .as("is_error of call %d of step %d: %s", n, step, AnthropicEndpoint.resultText(block))
                            .isFalse();
                }
            }
        }
        if (resultBlock(last, "task", 9, 0) == null) {
            return;
        }
        String session = suspended(resultOf(last, "task", 2, 0));
        List<Integer> seen = new ArrayList<>();
        for (int n = 0; n < SubCallsTask.CHUNKS - SUBAGENTS; n++) {
            String prompt = resultOf(last, "task", 3, n);
            seen.add(task.chunkOf(prompt));
            bytes("rlm_pending id (main)", prompt);
        }
        String answered = resultOf(last, "task", 4, 0);
        bytes("rlm_answer 6 of 8 (main)", answered);
        softly.assertThat(SubCallsTask.pending(answered).keySet())
                .as("what the step still waits for after the main agent's answers:\n%s", answered)
                .hasSize(SUBAGENTS);
        subagents(subs, session, seen);
        softly.assertThat(seen)
                .as("the chunk each prompt read through rlm_pending holds whole (the sub-agents' last)")
                .containsExactlyInAnyOrder(0, 1, 2, 3, 4, 5, 6, 7);
        for (int n = 0; n < SUBAGENTS; n++) {
            softly.assertThat(resultOf(last, "task", 5, n))
                    .as("a sub-agent's hand-back to the main agent")
                    .contains("[Subagent hand-back]")
                    .containsPattern("Answered q\\d+ with \\d+\\.");
        }
        rlmRound(last, session);
    }

    /**
     * Each sub-agent read its prompt whole and answered it, side by side: one reply lists the other's request
     * as still pending, the other is the rest of the step, which waits at rlm_query.
     */
    private void subagents(List<Request> subs, String session, List<Integer> seen) {
        List<String> replies = new ArrayList<>();
        for (Request sub : subs) {
            String prompt = resultOf(sub, "sub", 1, 0);
            int chunk = task.chunkOf(prompt);
            seen.add(chunk);
            bytes("rlm_pending id (sub-agent)", prompt);
            softly.assertThat(sub.firstUserText()).as("the sub-agent's prompt").contains(session);
            JsonNode answered = resultBlock(sub, "sub", 2, 0);
            softly.assertThat(answered).as("the sub-agent's rlm_answer result").isNotNull();
            if (answered == null) {
                continue;
            }
            String reply = AnthropicEndpoint.resultText(answered);
            replies.add(reply);
            bytes("rlm_answer 1 of 8 (sub-agent)", reply);
            softly.assertThat(answered.path("is_error").asBoolean(false))
                    .as("is_error of the sub-agent's rlm_answer: %s", reply)
                    .isFalse();
            softly.assertThat(reply).as("the sub-agent's rlm_answer reply").contains(session);
        }
        // the answer given last, and only it, gets the rest of the step; two answers given at the same moment
        // must not both be told that the step now waits for the rlm request (both would go and answer it)
        softly.assertThat(replies)
                .as("the sub-agents' rlm_answer replies: one still waits for the other's answer, the other "
                        + "goes on to rlm_query (both at rlm_query: both calls took the last answer's part)")
                .anyMatch(r -> kinds(r).equals(List.of("llm")))
                .anyMatch(r -> kinds(r).equals(List.of("rlm")));
    }

    private static List<String> kinds(String reply) {
        return SubCallsTask.pending(reply).values().stream().map(Pending::kind).toList();
    }

    /** The first reply: suspended, 8 llm requests with ids q<n>, and the session to answer in. */
    private String suspended(String reply) {
        bytes("rlm_execute suspended (text)", reply);
        Map<String, Pending> pending = SubCallsTask.pending(reply);
        softly.assertThat(reply).as("the step's first reply").containsIgnoringCase("suspended");
        softly.assertThat(pending.keySet())
                .as("requests the step waits for, in:\n%s", reply)
                .hasSize(SubCallsTask.CHUNKS)
                .allMatch(id -> id.matches("q\\d+"));
        softly.assertThat(pending.values())
                .as("kinds")
                .allMatch(p -> p.kind().equals("llm") && p.childSession() == null);
        String session = SubCallsTask.answerSession(reply);
        softly.assertThat(reply).as("the reply names the session").contains(session);
        return session;
    }

    /** The step went on to rlm_query, the child session computed the answer, the step ended right. */
    private void rlmRound(Request last, String session) {
        String second = resultOf(last, "task", 6, 0);
        bytes("rlm_pending: waits at rlm_query", second);
        Map<String, Pending> pending = SubCallsTask.pending(second);
        softly.assertThat(pending.values())
                .as("what the step waits for after every llm answer:\n%s", second)
                .singleElement()
                .matches(p -> p.kind().equals("rlm") && p.childSession() != null)
                .matches(p -> !p.childSession().equals(session), "a session of its own");
        String child = resultOf(last, "task", 7, 0);
        bytes("rlm_execute in the child session", child);
        softly.assertThat(child)
                .as("the child session's context and the count computed from it")
                .startsWith("list " + task.lines().size() + " " + task.hosts());
        String end = resultOf(last, "task", 8, 0);
        bytes("rlm_answer var -> the step's end", end);
        softly.assertThat(end).as("the end of the step").contains(task.resultLine());
        softly.assertThat(SubCallsTask.pending(end))
                .as("nothing pending at the end")
                .isEmpty();
        softly.assertThat(end).as("the end of the step").doesNotContainIgnoringCase("suspended");
        if (!pending.isEmpty()) {
            String sessions = resultOf(last, "task", 9, 0);
            softly.assertThat(sessions)
                    .as("rlm_sessions once the step has ended")
                    .contains(session)
                    .doesNotContain(pending.values().iterator().next().childSession());
        }
    }

    private void bytes(String what, String text) {
        report.add(String.format(
                "%s: %-44s %6d B in front of the model", testName, what, text.getBytes(StandardCharsets.UTF_8).length));
    }
}

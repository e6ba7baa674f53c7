package dev.rlmmcp.rlm;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.util.List;

/**
 * A run as a tree, as it is kept in the session's trace (the entry's {@code rlm} field) and exported:
 * the root RLM and, under the sub-calls of its code, every child. Texts are clipped where noted.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
record Trajectory(
        String runId,
        String question,
        String model,
        String backend,
        RunLimits limits,
        String started,
        RunOutcome outcome,
        Node root) {

    /**
     * One RLM: its prompt (the question it was given), depth, model, what its {@code context} was (type,
     * length, preview), the messages it sent over its life ({@code messages}; each iteration's prompt
     * is a range of them, and a compaction starts a new range), its iterations, and how it ended.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Node(
            String id,
            int depth,
            String prompt,
            String model,
            String contextInfo,
            List<Message> messages,
            List<Iteration> iterations,
            String answer,
            boolean ready,
            String stoppedBy,
            long inputTokens,
            long outputTokens,
            Double costUsd,
            double ms,
            String started) {}

    /** A chat message; {@code content} clipped to 20,000 characters. */
    public record Message(String role, String content) {}

    /**
     * One model turn: the prompt it got (messages {@code [promptFrom, promptTo)} of its node); times are ISO-8601 instants, the model's
     * response, the code blocks run from it, the final answer if this turn gave one, a note when the
     * loop refused or asked again (an answer written beside code, a turn without code, a compaction),
     * and what the turn's own model call cost and took ({@code modelMs}; its sub-calls are counted in
     * their code blocks).
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Iteration(
            int index,
            int promptFrom,
            int promptTo,
            String response,
            List<CodeRun> codeBlocks,
            String finalAnswer,
            String note,
            long inputTokens,
            long outputTokens,
            Double costUsd,
            double ms,
            Double modelMs,
            String started) {}

    /**
     * One code block as run: its output (clipped as shown to the model), error, time (wall, and the
     * kernel's own {@code execMs}), and sub-calls.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record CodeRun(
            String code,
            String stdout,
            String stderr,
            String error,
            double ms,
            Double execMs,
            List<String> variablesChanged,
            List<SubCall> subCalls) {}

    /**
     * A sub-call the code made: {@code kind} "llm" (a plain completion) or "rlm" (a child RLM, whose
     * tree is {@code child}; an rlm_query past the depth limit is an "llm" call). {@code cached}: answered
     * from the run's cache of identical calls.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record SubCall(
            String kind,
            String prompt,
            String response,
            String error,
            String model,
            long inputTokens,
            long outputTokens,
            Double costUsd,
            double ms,
            boolean cached,
            Node child) {}
}

package dev.rlmmcp.rlm;

/** The texts the loop sends the model: its system prompt, its first message, and what it says between turns. */
final class LoopPrompt {

    static final String SUMMARIZE = "Summarize your progress so far: what you found, which variables hold what, and "
            + "what is left to do. Do not write code.";

    private LoopPrompt() {}

    static String system(int outputCap, boolean childrenAllowed) {
        return """
                You are a Recursive Language Model (RLM): you answer a question about a context that is stored \
                in a Python REPL, not in this conversation. You are asked turn by turn until you answer.

                Write Python in ```repl blocks; the REPL keeps its variables across turns, and only what your code \
                prints comes back to you (at most %d characters per block; where output is cut, it says so). In \
                the REPL:
                - `context`: the data the question is about (its type, length and a preview are in the first message).
                - `llm_query(prompt, system=None, max_tokens=None, model=None) -> str`: one sub-LLM completion, to \
                read or judge a chunk of text; `llm_query_batched(prompts, concurrency=None) -> list[str]` runs many \
                in parallel.
                - `rlm_query(prompt, context=None, model=None) -> str`: a child RLM with a REPL of its own whose \
                `context` is the value you pass, for a sub-task that needs code and steps of its own; \
                `rlm_query_batched(prompts, contexts=None) -> list[str]` runs children in parallel (a failed child \
                gives an error string in its place).%s
                - `SHOW_VARS()`: the variables you have.
                - `answer`: a dict {"content": "", "ready": False}.

                Look at `context` first (type, length, a slice), then search, count and parse it in code. Send \
                chunks to llm_query or rlm_query only where meaning, not pattern, is needed, and keep partial \
                results in variables.

                To answer, in a ```repl block: answer["content"] = <the answer>; answer["ready"] = True. \
                (FINAL(value) and FINAL_VAR(name) in a block, or on a line of their own outside code, also \
                answer.) An answer counts only once code has run and you have seen its output: if a turn has code \
                and an answer written outside it, the code runs and you are asked to answer again.""".formatted(
                        outputCap,
                        childrenAllowed
                                ? ""
                                : " Here the depth limit is reached: rlm_query is answered by an llm_query of the prompt with the context's "
                                        + "value as text, so pass a context small enough for one prompt.");
    }

    static String first(String question, String contextInfo) {
        return "Question: " + question + "\n" + (contextInfo == null ? "There is no `context` variable." : contextInfo)
                + "\n\nStart by looking at the context in a ```repl block.";
    }

    static String describe(String type, Long length, String preview) {
        return describe("The variable `context`", type, length, preview);
    }

    /** What {@code subject} holds: its type, length where it has one, and a preview. */
    static String describe(String subject, String type, Long length, String preview) {
        return subject + " holds a " + type + (length == null ? "" : " of length " + length) + ".\nPreview: "
                + (preview == null ? "(none)" : preview);
    }

    static final String ASK_AGAIN = "Your answer came with code, so it was not taken: the code ran first and its "
            + "output is above. Answer again now that you have seen it.";

    static final String NO_CODE = "No code ran this turn. Work in ```repl blocks; when you have the answer, set "
            + "answer[\"content\"] and answer[\"ready\"] = True in a block.";

    static final String NO_CODE_YET = "No code ran this turn, and none has run yet: an answer must rest on what the "
            + "REPL printed, not on output you expect. Look at `context` in a ```repl block first.";

    static String compacted(String summary) {
        return "Earlier turns were summarized into the variable `history` (a list of {\"role\", \"content\"} dicts, "
                + "oldest first). Summary of them:\n" + summary + "\n\nContinue.";
    }
}

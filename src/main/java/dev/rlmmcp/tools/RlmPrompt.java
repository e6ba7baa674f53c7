package dev.rlmmcp.tools;

import io.modelcontextprotocol.server.McpServerFeatures.SyncPromptSpecification;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.List;

/** The MCP prompt {@code rlm}: how to work on data too large for the context window with these tools. */
public final class RlmPrompt {

    public static final String NAME = "rlm";

    static final String WORKFLOW = """
            You have a persistent Python REPL (rlm-mcp). Work on large data through it, not in this conversation.

            1. Put the data in a variable, never in the chat: rlm_init_context (a new session with its limits), \
            rlm_load_file (a file under the data root) or rlm_load_data (text you already have).
            2. Look before you print: len(x), type(x), x[:500], a few sampled lines or rows, counts. \
            Never print a whole variable; keep every output a few hundred lines at most.
            3. Work in code: filter, search (re), count (collections.Counter), parse. For work that needs \
            judgement, split the data into chunks, handle each chunk, keep the partial results in a variable \
            and aggregate them.
            4. For meaning rather than pattern, ask a sub-LLM from the code, a chunk at a time: \
            llm_query(prompt, system=None, max_tokens=None, model=None) returns the answer as a str; \
            llm_query_batched(prompts, concurrency=None) returns the answers in order, the calls running in \
            parallel. Keep each prompt small (a chunk plus a precise question), keep the answers in a variable \
            and aggregate them in code. Failures raise LLMQueryError with .code: LIMIT_EXCEEDED (calls per \
            step, calls per session, token budget), PROMPT_TOO_LARGE (send a smaller chunk), TIMEOUT, \
            BACKEND_ERROR; a failed batch keeps the good answers in .answers. Each reply's llm_usage shows calls \
            and tokens used. Unless the server has a model API (RLM_LLM_BASE_URL) or your client does MCP \
            sampling, you are the sub-LLM: the step SUSPENDS and its reply lists the pending calls by id. Answer them with rlm_answer (any subset; \
            hand a large batch to sub-agents in parallel, each reading its prompt with rlm_pending and \
            answering its ids); the reply to the last answer is the rest of the step. For a sub-task that needs code and steps of its own, rlm_query(prompt, context=chunk) starts a child \
            RLM with its own REPL (chunk is its `context`) and returns its answer; rlm_query_batched(prompts, \
            contexts) runs children in parallel; when you are the model, each child is a session with that \
            `context`: work in it with rlm_execute and answer with {"id", "var": name}. rlm_solve runs the whole \
            loop on the server when it has a model API.
            5. One step per call: a short, focused piece of code per rlm_run_repl (in a session) or \
            rlm_execute. Read the output, then decide the next step. Store results in variables.
            6. Read results with rlm_get_var (paged for big values) and check them against the data.
            7. Finish with rlm_finalize, passing final_text or the name of the variable holding the answer.

            Replies are text: what your code printed, a short traceback if it raised, and a last line in \
            [brackets] only when something changed (variables set or deleted, output cut and where the rest \
            is, memory, evictions, guardrails). Refusals read ERROR CODE (argument): message, then fix: what \
            to do. Pass response_format "json" for every field.""";

    private RlmPrompt() {}

    public static SyncPromptSpecification specification() {
        McpSchema.Prompt prompt = new McpSchema.Prompt(
                NAME,
                "Work on data larger than your context: the RLM workflow",
                List.of(new McpSchema.PromptArgument("task", "What to find out or produce from the data", false)));
        return new SyncPromptSpecification(prompt, (exchange, request) -> {
            Object task =
                    request.arguments() == null ? null : request.arguments().get("task");
            return new McpSchema.GetPromptResult(
                    "The RLM workflow for rlm-mcp",
                    List.of(new McpSchema.PromptMessage(McpSchema.Role.USER, new McpSchema.TextContent(text(task)))));
        });
    }

    static String text(Object task) {
        String given = task == null ? "" : task.toString().strip();
        return given.isEmpty() ? WORKFLOW : WORKFLOW + "\n\nYour task:\n" + given;
    }
}

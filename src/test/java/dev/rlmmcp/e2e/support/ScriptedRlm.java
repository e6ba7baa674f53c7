package dev.rlmmcp.e2e.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.llm.ChatCompletionsServer;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A scripted model for the RLM loop, served by {@link ChatCompletionsServer}: deterministic policies,
 * chosen by the RLM's question (the first line of its first user message), that write the code a model
 * would. It reads the requests as the loop sends them (an RLM turn has the system prompt "You are a
 * Recursive Language Model"; anything else is a plain llm_query) and answers with usage.
 */
public final class ScriptedRlm implements ChatCompletionsServer.Behaviour {

    /**
     * Root: looks at the context, then splits it into 4 chunks and counts the ERROR lines in each with a
     * child RLM (2 turns of its own, 4 children of one turn each).
     */
    public static final String COUNT_ERRORS = "How many ERROR lines are in the log?";

    public static final String CHILD_COUNT = "Count the ERROR lines in context.";
    /** Never declares its answer ready: each turn writes a better partial answer. */
    public static final String NEVER_DONE = "Keep refining forever.";
    /** Root: three children whose code sleeps a minute. */
    public static final String SLEEPY = "Wait for your children.";

    static final String CHILD_SLEEP = "Sleep for a minute.";

    private static final ObjectMapper JSON = new ObjectMapper();

    public final AtomicInteger rlmTurns = new AtomicInteger();
    public final AtomicInteger childTurns = new AtomicInteger();
    private final long rootDelayMs;
    private final long childDelayMs;

    /** How long each turn of the root RLM and of a child takes, as a real model's would. */
    public ScriptedRlm(long rootDelayMs, long childDelayMs) {
        this.rootDelayMs = rootDelayMs;
        this.childDelayMs = childDelayMs;
    }

    @Override
    public ChatCompletionsServer.Reply answer(JsonNode request) throws Exception {
        JsonNode messages = request.path("messages");
        boolean rlm = messages.path(0).path("content").asText().contains("You are a Recursive Language Model");
        if (!rlm) {
            String prompt = messages.path(messages.size() - 1).path("content").asText();
            return reply(request, "answer: " + prompt, 0);
        }
        rlmTurns.incrementAndGet();
        String first = messages.path(1).path("content").asText();
        String question = first.lines()
                .findFirst()
                .orElse("")
                .replaceFirst("^Question: ", "")
                .strip();
        int turn = 0;
        for (JsonNode m : messages) {
            if ("assistant".equals(m.path("role").asText())) {
                turn++;
            }
        }
        String code = switch (question) {
            case COUNT_ERRORS ->
                turn == 0
                        ? "print(type(context).__name__, len(context))\n"
                        : """
                    step = len(context) // 4 + 1
                    chunks = [context[i:i + step] for i in range(0, len(context), step)]
                    counts = rlm_query_batched([%s] * len(chunks), chunks)
                    print(counts)
                    answer["content"] = str(sum(int(c) for c in counts))
                    answer["ready"] = True
                    """.formatted(JSON.writeValueAsString(CHILD_COUNT));
            case CHILD_COUNT -> """
                    answer["content"] = str(sum(1 for line in context.splitlines() if "ERROR" in line))
                    answer["ready"] = True
                    """;
            case NEVER_DONE -> """
                    answer["content"] = "partial answer %d"
                    print("still thinking")
                    """.formatted(turn + 1);
            case SLEEPY -> """
                    results = rlm_query_batched([%s] * 3, ["a", "b", "c"])
                    answer["content"] = " ".join(results)
                    answer["ready"] = True
                    """.formatted(JSON.writeValueAsString(CHILD_SLEEP));
            case CHILD_SLEEP -> """
                    import time
                    time.sleep(60)
                    answer["content"] = "woke"
                    answer["ready"] = True
                    """;
            default -> "print('no script for: ' + %s)".formatted(JSON.writeValueAsString(question));
        };
        boolean child = question.equals(CHILD_COUNT) || question.equals(CHILD_SLEEP);
        if (child) {
            childTurns.incrementAndGet();
        }
        return reply(request, "Let me work on it.\n```repl\n" + code + "```\n", child ? childDelayMs : rootDelayMs);
    }

    private static ChatCompletionsServer.Reply reply(JsonNode request, String content, long delayMs) {
        ObjectNode body = JSON.createObjectNode();
        body.put("model", request.path("model").asText("scripted"));
        body.putArray("choices")
                .addObject()
                .putObject("message")
                .put("role", "assistant")
                .put("content", content);
        body.putObject("usage")
                .put("prompt_tokens", request.path("messages").toString().length() / 4)
                .put("completion_tokens", content.length() / 4);
        return new ChatCompletionsServer.Reply(200, body.toString(), delayMs);
    }
}

package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import dev.rlmmcp.llm.ChatCompletionsServer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The limits a run's tree cannot slip, end to end: a stdio server whose RLM loop drives a scripted
 * OpenAI-compatible model on a real socket. A question larger than --llm-context-window is refused
 * before any request; rlm_query at the depth limit sends the context's value; a grandchild whose
 * ancestors hold both places of --max-kernels 2 fails at once.
 */
class RlmLimitsIT {

    @TempDir
    Path tmp;

    private List<String> server(ChatCompletionsServer api, String... extra) {
        List<String> args = new ArrayList<>(List.of(
                "stdio",
                "--data-root",
                tmp.toString(),
                "--llm-base-url",
                api.baseUrl().toString(),
                "--llm-model",
                "scripted",
                "--warm-kernels",
                "0"));
        args.addAll(List.of(extra));
        return ServerProcess.command(args);
    }

    /** An RLM turn runs the code its question names; a plain call counts the lines of its prompt that start with "line ". */
    private static ChatCompletionsServer.Reply script(JsonNode request) {
        JsonNode messages = request.path("messages");
        String first = messages.path(1).path("content").asText();
        if (!messages.path(0).path("content").asText().contains("Recursive Language Model")) {
            String prompt = ChatCompletionsServer.userPrompt(request);
            long lines = prompt.lines().filter(l -> l.startsWith("line ")).count();
            return ChatCompletionsServer.completion(String.valueOf(lines), 10, 1, 0);
        }
        String code = first.startsWith("Question: root")
                ? "out = rlm_query('child', 'x')"
                : first.startsWith("Question: child")
                        ? "try:\n    out = rlm_query('grandchild', 'y')\nexcept Exception as e:\n    out = f'{e.code}: {e}'"
                        : "out = rlm_query('How many lines?', '\\n'.join(f'line {i}' for i in range(29)))";
        return ChatCompletionsServer.completion(
                "```repl\n" + code + "\nanswer['content'] = out\nanswer['ready'] = True\n```", 10, 10, 0);
    }

    @Test
    void aQuestionLargerThanTheWindowIsRefusedBeforeAnyRequest() throws Exception {
        try (ChatCompletionsServer api = new ChatCompletionsServer();
                McpDriver client = McpDriver.stdio(server(api, "--llm-context-window", "1000"))) {
            api.behaviour = RlmLimitsIT::script;
            JsonNode reply = McpDriver.json(client.call(
                    "rlm_solve", Map.of("question", "count " + "y".repeat(8000), "context", Map.of("text", "x"))));
            assertThat(reply.path("stop_message").asText())
                    .as(reply.toString())
                    .contains("PROMPT_TOO_LARGE")
                    .contains("context window of 1000 tokens");
            assertThat(api.seen()).isEmpty();
        }
    }

    @Test
    void rlmQueryAtTheDepthLimitSendsTheContextsValue() throws Exception {
        try (ChatCompletionsServer api = new ChatCompletionsServer();
                McpDriver client = McpDriver.stdio(server(api))) {
            api.behaviour = RlmLimitsIT::script;
            JsonNode reply = McpDriver.json(client.call(
                    "rlm_solve", Map.of("question", "count", "context", Map.of("text", "x"), "max_depth", 1)));
            assertThat(reply.path("answer").asText()).as(reply.toString()).isEqualTo("29");
        }
    }

    @Test
    void aGrandchildWhoseAncestorsHoldEveryKernelFailsAtOnce() throws Exception {
        try (ChatCompletionsServer api = new ChatCompletionsServer();
                McpDriver client = McpDriver.stdio(server(api, "--max-kernels", "2"))) {
            api.behaviour = RlmLimitsIT::script;
            long t0 = System.nanoTime();
            JsonNode reply = McpDriver.json(client.call(
                    "rlm_solve",
                    Map.of("question", "root", "context", Map.of("text", "x"), "max_depth", 3, "max_time_s", 20)));
            assertThat((System.nanoTime() - t0) / 1_000_000).isLessThan(15_000);
            assertThat(reply.path("answer").asText())
                    .as(reply.toString())
                    .startsWith("CAPACITY")
                    .contains("--max-kernels");
        }
    }
}

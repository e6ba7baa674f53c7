package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.ChatApiSampler;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.RevisionClient;
import dev.rlmmcp.e2e.support.ScriptedModel;
import dev.rlmmcp.e2e.support.ServerProcess;
import dev.rlmmcp.e2e.support.StdioRpc;
import dev.rlmmcp.llm.ChatCompletionsServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Child RLMs (rlm_query_batched from kernel code) driven by the MCP client, on a server with no
 * OpenAI-compatible API of its own: every model turn of every child goes to the client as a sampling
 * request (stdio, Streamable HTTP, legacy SSE) or in an input_required round (protocol 2026-07-28, HTTP and stdio),
 * carrying the child's whole conversation, and the client answers it from a scripted chat completions
 * endpoint. The children run in parallel, answer from what their code computed in their own kernels, and
 * their own rlm_query (at the depth limit: an llm_query of the prompt with the context's value) goes to the client too.
 */
class RlmSamplingIT {

    private static final String RLM_MARK = "You are a Recursive Language Model";
    private static final int CHUNKS = 4;
    private static final int PER_CHUNK = 100;

    /** Loads 400 numbers, and asks one child per chunk of 100 to count and sum its chunk. */
    private static final String BATCH = """
            secret = "the parent's own"
            numbers = list(range(1, %d))
            chunks = [" ".join(map(str, numbers[i:i + %d])) for i in range(0, len(numbers), %d)]
            answers = rlm_query_batched([f"Count and sum the numbers of chunk {i}" for i in range(len(chunks))], chunks)
            for a in answers:
                print(a)
            """.formatted(CHUNKS * PER_CHUNK + 1, PER_CHUNK, PER_CHUNK);

    /** One child of three has its model turns refused by the client; then one alone. */
    private static final String REFUSED = """
            answers = rlm_query_batched(["Count and sum chunk A", "FAIL on every turn", "Count and sum chunk C"],
                                        ["1 2 3", "4 5 6", "7 8 9"])
            for a in answers:
                print(a)
            try:
                rlm_query("FAIL on every turn", "10 11")
            except RLMQueryError as e:
                print("raised", e.code)
            """;

    /**
     * The scripted model: an RLM turn gets code, first to read {@code context} into variables and print them,
     * then (once the REPL's output came back) to answer from those variables; a question with FAIL fails.
     */
    private static ChatCompletionsServer.Reply policy(JsonNode request) {
        JsonNode messages = request.path("messages");
        if (!messages.path(0).path("content").asText().contains(RLM_MARK)) {
            return ChatCompletionsServer.upperCase(request);
        }
        if (messages.path(1).path("content").asText().contains("FAIL")) {
            return new ChatCompletionsServer.Reply(503, "{\"error\":{\"message\":\"scripted refusal\"}}", 0);
        }
        long turns = IntStream.range(0, messages.size())
                .filter(i -> "assistant".equals(messages.path(i).path("role").asText()))
                .count();
        if (turns == 0) {
            // slow enough that the children's first turns are asked at once
            return ChatCompletionsServer.completion("""
                    Reading the chunk first.
                    ```repl
                    values = [int(w) for w in context.split()]
                    result = f"{len(values)} numbers, sum {sum(values)}, parent's variable seen: {'secret' in globals()}"
                    print(result)
                    print(rlm_query(f"Reply with the count {len(values)} from {values[0]}", "the chunk's tail"))
                    ```
                    """, 50, 20, 300);
        }
        String code = """
                The REPL printed it; answering from the variable.
                ```repl
                answer["content"] = result
                answer["ready"] = True
                ```
                """;
        return ChatCompletionsServer.completion(code, 50, 20, 0);
    }

    private static List<String> expected() {
        List<String> lines = new ArrayList<>();
        for (int c = 0; c < CHUNKS; c++) {
            long first = (long) c * PER_CHUNK + 1, last = first + PER_CHUNK - 1;
            lines.add(
                    PER_CHUNK + " numbers, sum " + (first + last) * PER_CHUNK / 2 + ", parent's variable seen: False");
        }
        return lines;
    }

    private static ChatCompletionsServer scriptedModel() throws Exception {
        ChatCompletionsServer model = new ChatCompletionsServer();
        model.behaviour = RlmSamplingIT::policy;
        return model;
    }

    private static List<String> driverArgs(ChatCompletionsServer model, String... transport) {
        List<String> args =
                new ArrayList<>(List.of("--sampling-url", model.baseUrl().toString()));
        args.addAll(List.of(transport));
        return args;
    }

    @Test
    void overStdioChildRlmsTakeTheirTurnsThroughSampling() throws Exception {
        try (ChatCompletionsServer model = scriptedModel()) {
            List<String> args = driverArgs(model, "--stdio", "--");
            args.addAll(ServerProcess.command(List.of("stdio")));
            try (McpDriver client = McpDriver.start(args)) {
                childrenAnswerThroughTheClient(client, model);
                aRefusedChildIsAnErrorInItsPlace(client);
            }
        }
    }

    @Test
    void overStreamableHttpChildRlmsTakeTheirTurnsThroughSampling() throws Exception {
        try (ChatCompletionsServer model = scriptedModel();
                ServerProcess server = ServerProcess.http();
                McpDriver client = McpDriver.start(driverArgs(model, "--http", server.mcpUrl()))) {
            childrenAnswerThroughTheClient(client, model);
            aRefusedChildIsAnErrorInItsPlace(client);
        }
    }

    @Test
    void overLegacySseChildRlmsTakeTheirTurnsThroughSampling() throws Exception {
        try (ChatCompletionsServer model = scriptedModel();
                ServerProcess server = ServerProcess.http();
                McpDriver client = McpDriver.start(driverArgs(model, "--sse", server.baseUrl() + "/sse"))) {
            childrenAnswerThroughTheClient(client, model);
        }
    }

    @Test
    void overTheStatelessRevisionOnHttpChildRlmsTakeTheirTurnsThroughInputRequiredRounds() throws Exception {
        try (ChatCompletionsServer model = scriptedModel();
                ServerProcess server = ServerProcess.http()) {
            childrenAnswerThroughRounds(
                    RevisionClient.http(server.mcpUrl(), new ChatApiSampler(model.baseUrl())), model);
        }
    }

    @Test
    void overTheStatelessRevisionOnStdioChildRlmsTakeTheirTurnsThroughInputRequiredRounds() throws Exception {
        try (ChatCompletionsServer model = scriptedModel();
                StdioRpc rpc =
                        StdioRpc.stateless(ServerProcess.command(List.of("stdio")), Map.of("sampling", Map.of()))) {
            childrenAnswerThroughRounds(RevisionClient.stdio(rpc, new ChatApiSampler(model.baseUrl())), model);
        }
    }

    /**
     * The project's scripted model endpoint behind the client: children asked for a needle in their chunk
     * take its three turns each (look, compute, answer) through sampling and answer from their code.
     */
    @Test
    void theScriptedModelAnswersChildTurnsThroughTheClient() throws Exception {
        try (ScriptedModel model = ScriptedModel.start()) {
            List<String> args =
                    new ArrayList<>(List.of("--sampling-url", model.baseUrl().toString(), "--stdio", "--"));
            args.addAll(ServerProcess.command(List.of("stdio")));
            try (McpDriver client = McpDriver.start(args)) {
                JsonNode reply = McpDriver.json(client.call("rlm_execute", Map.of("code", """
                        lines = [f"record {i}: nothing to see" for i in range(2000)]
                        lines[1234] = "record 1234: the magic number is 867530"
                        chunks = ["\\n".join(lines[i:i + 500]) for i in range(0, 2000, 500)]
                        question = "Find the magic number in this chunk of the context. Answer with the number only, or NONE."
                        print(rlm_query_batched([question] * len(chunks), chunks))
                        """)));
                assertThat(reply.path("stdout").asText())
                        .as(reply.toString())
                        .isEqualTo("['NONE', 'NONE', '867530', 'NONE']\n");
                List<JsonNode> sampling = client.events().stream()
                        .filter(e -> "sampling".equals(e.path("event").asText()))
                        .toList();
                assertThat(sampling).hasSize(3 * 4).allSatisfy(e -> {
                    assertThat(e.path("params").path("systemPrompt").asText()).contains(RLM_MARK);
                    assertThat(e.has("error")).isFalse();
                });
            }
        }
    }

    private static void childrenAnswerThroughRounds(RevisionClient client, ChatCompletionsServer model)
            throws Exception {
        JsonNode result = client.callTool("rlm_execute", Map.of("code", BATCH));
        assertThat(result.path("resultType").asText()).as(result.toString()).isEqualTo("complete");
        JsonNode reply = McpDriver.json(result);
        assertThat(reply.path("stdout").asText().lines().toList())
                .as(reply.toString())
                .isEqualTo(expected());
        conversationsCarried(client.sampled());
        // the children ran side by side: their turns were asked together, several in a round
        assertThat(client.roundSizes().stream()
                        .mapToInt(Integer::intValue)
                        .max()
                        .orElse(0))
                .as(client.roundSizes().toString())
                .isGreaterThanOrEqualTo(2);
        assertThat(model.seen()).hasSize(client.sampled().size());
    }

    private static void childrenAnswerThroughTheClient(McpDriver client, ChatCompletionsServer model) {
        JsonNode reply = McpDriver.json(client.call("rlm_execute", Map.of("code", BATCH)));
        assertThat(reply.path("stdout").asText().lines().toList())
                .as(reply.toString())
                .isEqualTo(expected());
        List<JsonNode> sampling = client.events().stream()
                .filter(e -> "sampling".equals(e.path("event").asText()))
                .toList();
        assertThat(sampling)
                .allSatisfy(e -> assertThat(e.has("error")).as(e.toString()).isFalse());
        conversationsCarried(sampling.stream().map(e -> e.path("params")).toList());
        // the children ran side by side: the client answered several of their turns at once
        assertThat(sampling.stream()
                        .mapToInt(e -> e.path("in_flight").asInt())
                        .max()
                        .orElse(0))
                .isGreaterThanOrEqualTo(2);
        // what the endpoint was asked is the sampling request as a chat: the system prompt first
        assertThat(model.seen()).hasSize(sampling.size());
        assertThat(model.seen().stream()
                        .filter(seen -> seen.body()
                                .path("messages")
                                .path(0)
                                .path("role")
                                .asText()
                                .equals("system"))
                        .toList())
                .hasSize(2 * CHUNKS)
                .allSatisfy(seen -> {
                    assertThat(seen.path()).isEqualTo("/v1/chat/completions");
                    assertThat(seen.body()
                                    .path("messages")
                                    .path(0)
                                    .path("content")
                                    .asText())
                            .contains(RLM_MARK);
                    assertThat(seen.body()
                                    .path("messages")
                                    .path(1)
                                    .path("content")
                                    .asText())
                            .startsWith("Question: ");
                });
    }

    /**
     * Each child's turns reached the client with its conversation: the RLM system prompt, its question with
     * the context described first, then (second turn) the model's code and the REPL's output of it, which
     * holds the answer to the child's own rlm_query: a plain request (no RLM system prompt) at the depth limit.
     */
    private static void conversationsCarried(List<JsonNode> all) {
        List<JsonNode> requests = all.stream()
                .filter(p -> p.path("systemPrompt").asText().contains(RLM_MARK))
                .toList();
        List<JsonNode> plain = all.stream()
                .filter(p -> !p.path("systemPrompt").asText().contains(RLM_MARK))
                .toList();
        assertThat(requests).hasSize(2 * CHUNKS);
        assertThat(plain).hasSize(CHUNKS).allSatisfy(p -> {
            assertThat(p.path("messages").size()).isEqualTo(1);
            assertThat(p.path("messages").path(0).path("content").path("text").asText())
                    .startsWith("Reply with the count " + PER_CHUNK + " from ")
                    .endsWith("The context:\nthe chunk's tail");
        });
        for (int c = 0; c < CHUNKS; c++) {
            String question = "Question: Count and sum the numbers of chunk " + c;
            List<JsonNode> child = requests.stream()
                    .filter(p -> p.path("messages")
                            .path(0)
                            .path("content")
                            .path("text")
                            .asText()
                            .startsWith(question + "\n"))
                    .toList();
            assertThat(child).as(question).hasSize(2);
            for (JsonNode p : child) {
                assertThat(p.path("systemPrompt").asText()).contains(RLM_MARK);
                JsonNode first = p.path("messages").path(0);
                assertThat(first.path("role").asText()).isEqualTo("user");
                assertThat(first.path("content").path("text").asText())
                        .contains(
                                "The variable `context` holds a str of length",
                                "Preview: " + (c * PER_CHUNK + 1) + " ");
            }
            JsonNode firstTurn = child.stream()
                    .filter(p -> p.path("messages").size() == 1)
                    .findFirst()
                    .orElseThrow();
            JsonNode secondTurn = child.stream()
                    .filter(p -> p.path("messages").size() == 3)
                    .findFirst()
                    .orElseThrow(
                            () -> new AssertionError("no second turn of " + question + " with 3 messages: " + child));
            assertThat(secondTurn.path("messages").path(0))
                    .isEqualTo(firstTurn.path("messages").path(0));
            assertThat(secondTurn.path("messages").path(1).path("role").asText())
                    .isEqualTo("assistant");
            assertThat(secondTurn
                            .path("messages")
                            .path(1)
                            .path("content")
                            .path("text")
                            .asText())
                    .contains("values = [int(w)");
            JsonNode output = secondTurn.path("messages").path(2);
            assertThat(output.path("role").asText()).isEqualTo("user");
            assertThat(output.path("content").path("text").asText())
                    .startsWith("REPL output:")
                    .contains(
                            expected().get(c),
                            "answer: REPLY WITH THE COUNT " + PER_CHUNK + " FROM " + (c * PER_CHUNK + 1));
        }
    }

    private static void aRefusedChildIsAnErrorInItsPlace(McpDriver client) {
        JsonNode reply = McpDriver.json(client.call("rlm_execute", Map.of("code", REFUSED)));
        List<String> lines = reply.path("stdout").asText().lines().toList();
        assertThat(lines).as(reply.toString()).hasSize(4);
        assertThat(lines.get(0)).isEqualTo("3 numbers, sum 6, parent's variable seen: False");
        assertThat(lines.get(1))
                .startsWith("[rlm_query failed: NO_ANSWER: ")
                .contains("max_consecutive_errors", "the model call failed", "HTTP 503", "scripted refusal");
        assertThat(lines.get(2)).isEqualTo("3 numbers, sum 24, parent's variable seen: False");
        assertThat(lines.get(3)).isEqualTo("raised NO_ANSWER");
        assertThat(client.events())
                .anySatisfy(e -> assertThat(e.path("error").asText()).contains("HTTP 503"));
    }
}

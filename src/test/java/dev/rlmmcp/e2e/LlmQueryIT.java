package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import dev.rlmmcp.llm.ChatCompletionsServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * llm_query from kernel code, end to end: answered by the MCP client itself through sampling (the
 * official TypeScript SDK, over stdio and Streamable HTTP; canned replies, or its own chat completions endpoint),
 * or by an OpenAI-compatible API.
 */
class LlmQueryIT {

    private static final String REPLY = "echo:{{PROMPT}}|{{system}}";

    private static List<String> driverArgs(String... transport) {
        List<String> args = new ArrayList<>(List.of("--sampling-reply", REPLY, "--sampling-delay-ms", "300"));
        args.addAll(List.of(transport));
        return args;
    }

    private static List<String> stdioServer(String... extra) {
        List<String> args = new ArrayList<>(List.of("stdio"));
        args.addAll(List.of(extra));
        return ServerProcess.command(args);
    }

    @Test
    void samplingOverStdioAnswersLlmQueryFromTheClient() {
        List<String> args = driverArgs("--stdio", "--");
        args.addAll(stdioServer());
        try (McpDriver client = McpDriver.start(args)) {
            samplingAnswersAndAggregates(client);
        }
    }

    @Test
    void samplingOverStreamableHttpTravelsOnTheCallsStream() throws Exception {
        try (ServerProcess server = ServerProcess.http();
                McpDriver client = McpDriver.start(driverArgs("--http", server.mcpUrl()))) {
            samplingAnswersAndAggregates(client);
        }
    }

    private static void samplingAnswersAndAggregates(McpDriver client) {
        JsonNode one = exec(client, "print(llm_query('abc', system='sys', model='hint-model', max_tokens=33))");
        assertThat(one.path("stdout").asText()).as(one.toString()).isEqualTo("echo:ABC|sys\n");
        JsonNode request = client.events().stream()
                .filter(e -> "sampling".equals(e.path("event").asText()))
                .findFirst()
                .orElseThrow()
                .path("params");
        assertThat(request.path("systemPrompt").asText()).isEqualTo("sys");
        assertThat(request.path("maxTokens").asInt()).isEqualTo(33);
        assertThat(request.path("modelPreferences")
                        .path("hints")
                        .path(0)
                        .path("name")
                        .asText())
                .isEqualTo("hint-model");
        assertThat(one.path("llm_usage").path("backend").asText()).isEqualTo("sampling");

        JsonNode batch = exec(client, """
                chunks = ["aa bb", "cc", "dd ee ff", "gg", "hh ii", "jj"]
                answers = llm_query_batched(chunks, concurrency=3)
                print(answers)
                print(sum(len(a.split()) for a in answers))
                """);
        assertThat(batch.path("stdout").asText()).as(batch.toString()).isEqualTo("""
                ['echo:AA BB|', 'echo:CC|', 'echo:DD EE FF|', 'echo:GG|', 'echo:HH II|', 'echo:JJ|']
                10
                """);
        List<JsonNode> sampled = client.events().stream()
                .filter(e -> "sampling".equals(e.path("event").asText()))
                .toList();
        assertThat(sampled).hasSize(7);
        assertThat(sampled.stream()
                        .mapToInt(e -> e.path("in_flight").asInt())
                        .max()
                        .orElse(0))
                .isEqualTo(3);
        JsonNode usage = batch.path("llm_usage");
        assertThat(usage.path("calls").asInt()).isEqualTo(6);
        assertThat(usage.path("peak_concurrency").asInt()).isEqualTo(3);
        assertThat(usage.path("latency_ms_max").asDouble()).isGreaterThanOrEqualTo(290);

        JsonNode trace = json(client.call(
                "rlm_get_trace", Map.of("session_id", batch.path("session_id").asText())));
        JsonNode steps = trace.path("steps");
        assertThat(steps.path(steps.size() - 1).path("llm_usage").path("calls").asInt())
                .isEqualTo(6);

        JsonNode session = json(client.call("rlm_init_context", Map.of("llm_max_calls_per_step", 2)));
        JsonNode limited = json(client.call(
                "rlm_run_repl", Map.of("session_id", session.path("session_id").asText(), "code", """
                        try:
                            llm_query_batched(["a", "b", "c"])
                        except LLMQueryError as e:
                            print(e.code)
                        print(llm_query_batched(["a", "b"]))
                        """)));
        assertThat(limited.path("stdout").asText()).isEqualTo("LIMIT_EXCEEDED\n['echo:A|', 'echo:B|']\n");
        assertThat(limited.path("llm_usage")
                        .path("guardrail_events")
                        .path(0)
                        .path("guardrail")
                        .asText())
                .isEqualTo("llm_max_calls_per_step");
    }

    @Test
    void aClientAnswersSamplingFromItsOwnChatCompletionsEndpoint() throws Exception {
        try (ChatCompletionsServer model = new ChatCompletionsServer()) {
            List<String> args =
                    new ArrayList<>(List.of("--sampling-url", model.baseUrl().toString(), "--stdio", "--"));
            args.addAll(stdioServer());
            try (McpDriver client = McpDriver.start(args)) {
                JsonNode one = exec(client, "print(llm_query('abc', system='sys', model='hint-model', max_tokens=33))");
                assertThat(one.path("stdout").asText()).as(one.toString()).isEqualTo("answer: ABC\n");
                assertThat(one.path("llm_usage").path("backend").asText()).isEqualTo("sampling");
                JsonNode asked = model.seen().get(0).body();
                assertThat(asked.path("model").asText()).isEqualTo("hint-model");
                assertThat(asked.path("max_tokens").asInt()).isEqualTo(33);
                assertThat(asked.path("messages").toString())
                        .isEqualTo(
                                "[{\"role\":\"system\",\"content\":\"sys\"},{\"role\":\"user\",\"content\":\"abc\"}]");

                // the endpoint's failure is the sampling request's: llm_query raises, naming it
                model.behaviour = request -> new ChatCompletionsServer.Reply(503, "{\"error\":\"busy\"}", 0);
                JsonNode failed = exec(client, """
                        try:
                            llm_query("hi")
                        except LLMQueryError as e:
                            print(e.code, e)
                        """);
                assertThat(failed.path("stdout").asText()).as(failed.toString()).contains("HTTP 503");
                assertThat(client.events())
                        .anySatisfy(e -> assertThat(e.path("error").asText()).contains("HTTP 503"));
            }
        }
    }

    @Test
    void aClientWithoutSamplingGetsAClearNotConfiguredErrorWhereOnlySamplingIsAllowed() {
        try (McpDriver client = McpDriver.stdio(stdioServer("--llm-backend", "sampling"))) {
            JsonNode reply = exec(client, """
                    try:
                        llm_query("hi")
                    except LLMQueryError as e:
                        print(e.code, e)
                    """);
            assertThat(reply.path("stdout").asText())
                    .startsWith("NOT_CONFIGURED llm_query needs MCP sampling here")
                    .contains("did not declare the sampling capability");
        }
    }

    @Test
    void anOpenAiCompatibleApiAnswersWhenConfigured() throws Exception {
        try (ChatCompletionsServer api = new ChatCompletionsServer();
                McpDriver client = McpDriver.stdio(
                        stdioServer("--llm-base-url", api.baseUrl().toString(), "--llm-model", "local-model"), REPLY)) {
            JsonNode reply = exec(client, "print(llm_query_batched(['x', 'y']))");
            assertThat(reply.path("stdout").asText()).as(reply.toString()).isEqualTo("['answer: X', 'answer: Y']\n");
            assertThat(reply.path("llm_usage").path("backend").asText()).isEqualTo("openai");
            assertThat(reply.path("llm_usage").path("input_tokens").asInt()).isEqualTo(2);
            assertThat(api.seen())
                    .extracting(s -> s.body().path("model").asText())
                    .containsOnly("local-model");
            assertThat(client.events())
                    .noneMatch(e -> "sampling".equals(e.path("event").asText()));
        }
    }

    private static JsonNode exec(McpDriver client, String code) {
        return json(client.call("rlm_execute", Map.of("code", code)));
    }

    private static JsonNode json(JsonNode result) {
        return McpDriver.json(result);
    }
}

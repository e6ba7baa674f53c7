package dev.rlmmcp.core;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.llm.ChatCompletionsServer;
import dev.rlmmcp.llm.LlmLimits;
import dev.rlmmcp.llm.LlmService;
import dev.rlmmcp.llm.OpenAiBackend;
import dev.rlmmcp.llm.OpenAiConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** llm_query and llm_query_batched from a real kernel, answered by a real OpenAI-compatible HTTP server. */
class LlmQueryTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String KEY = "sk-secret-llm-key-42";

    @TempDir
    Path dir;

    private ChatCompletionsServer api;
    private Sessions sessions;

    @BeforeEach
    void start() throws Exception {
        api = new ChatCompletionsServer();
        LlmService llm = new LlmService(
                LlmService.Mode.AUTO,
                new OpenAiBackend(new OpenAiConfig(api.baseUrl(), KEY, "test-model"), JSON),
                new LlmLimits(5, 12, 4, 1000, null, Duration.ofSeconds(2), 1),
                JSON);
        sessions = new Sessions(new KernelFactory(TestSettings.in(dir), new ProcessLauncher(), JSON), llm);
    }

    @AfterEach
    void stop() {
        sessions.close();
        api.close();
    }

    private Session session(LlmLimits limits) {
        return sessions.create("llm", Limits.NONE, limits, null);
    }

    private static ObjectNode run(Session session, String code) {
        return TestReplies.step(session.execute(StepRequest.of(code, Duration.ofSeconds(30))));
    }

    @Test
    void llmQueryAnswersAndTheStepReportsItsUsage() {
        Session session = sessions.resolve(null, "c");
        ObjectNode reply = run(session, """
                a = llm_query("count the words", system="be exact", max_tokens=20)
                print(a)
                """);
        assertThat(reply.path("stdout").asText()).isEqualTo("answer: COUNT THE WORDS\n");
        JsonNode usage = reply.path("llm_usage");
        assertThat(usage.path("backend").asText()).isEqualTo("openai");
        assertThat(usage.path("calls").asInt()).isEqualTo(1);
        assertThat(usage.path("input_tokens").asInt()).isEqualTo(15);
        assertThat(usage.path("output_tokens").asInt()).isEqualTo(3);
        assertThat(usage.path("latency_ms_total").asDouble()).isPositive();
        assertThat(usage.has("tokens_estimated")).isFalse();
        JsonNode sent = api.seen().getFirst().body();
        assertThat(sent.path("messages").path(0).path("content").asText()).isEqualTo("be exact");
        assertThat(sent.path("max_tokens").asInt()).isEqualTo(20);
        JsonNode traced = TestReplies.trace(session.trace(0, 10)).path("steps").path(0);
        assertThat(traced.path("llm_usage").path("calls").asInt()).isEqualTo(1);
        JsonNode call = traced.path("llm_calls").path(0);
        assertThat(call.path("prompt").asText()).isEqualTo("count the words");
        assertThat(call.path("system").asText()).isEqualTo("be exact");
        assertThat(call.path("answer").asText()).isEqualTo("answer: COUNT THE WORDS");
        assertThat(call.path("tokens").asInt()).isEqualTo(18);
        assertThat(call.path("latency_ms").asDouble()).isPositive();
        assertThat(reply.has("_llm_calls")).isFalse();
        assertThat(run(session, "print(1)").has("llm_usage")).isFalse();
        assertThat(TestReplies.summary(session.summary()).path("llm_calls").asInt())
                .isEqualTo(1);
    }

    @Test
    void batchedCallsRunConcurrentlyBoundedAndKeepTheirOrder() {
        CountDownLatch four = new CountDownLatch(4);
        api.behaviour = request -> {
            four.countDown();
            four.await(5, TimeUnit.SECONDS);
            String prompt = ChatCompletionsServer.userPrompt(request);
            int n = Integer.parseInt(prompt.substring(1));
            return ChatCompletionsServer.completion("r" + n, 1, 1, (10 - n) * 20L);
        };
        Session session = session(new LlmLimits(50, 50, 4, 1000, null, Duration.ofSeconds(10), 1));
        ObjectNode reply = run(session, """
                print(llm_query_batched([f"p{i}" for i in range(10)]))
                """);
        assertThat(reply.path("stdout").asText())
                .isEqualTo("['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8', 'r9']\n");
        assertThat(api.peakInFlight()).isEqualTo(4);
        assertThat(reply.path("llm_usage").path("peak_concurrency").asInt()).isEqualTo(4);
        assertThat(reply.path("llm_usage").path("calls").asInt()).isEqualTo(10);
    }

    @Test
    void theConcurrencyArgumentNarrowsTheBound() throws Exception {
        api.behaviour = request -> ChatCompletionsServer.completion("x", 1, 1, 100);
        Session session = session(new LlmLimits(50, 50, 4, 1000, null, Duration.ofSeconds(10), 1));
        ObjectNode reply = run(session, "r = llm_query_batched(['a'] * 6, concurrency=2)\nprint(len(r))");
        assertThat(reply.path("stdout").asText()).isEqualTo("6\n");
        assertThat(api.peakInFlight()).isEqualTo(2);
    }

    @Test
    void limitsRaiseInPythonAndAreGuardrailEventsInTheTrace() {
        Session session = session(new LlmLimits(3, 4, 2, 50, null, Duration.ofSeconds(10), 1));
        ObjectNode reply = run(session, """
                def code_of(f):
                    try:
                        f()
                    except LLMQueryError as e:
                        return e.code, str(e)
                print(code_of(lambda: llm_query_batched(["a", "b", "c", "d"])))
                print(code_of(lambda: llm_query("x" * 51)))
                print(llm_query_batched(["a", "b"]))
                print(code_of(lambda: llm_query_batched(["c", "d"])))
                """);
        assertThat(reply.path("stdout").asText()).isEqualTo("""
                ('LIMIT_EXCEEDED', 'a step may make 3 sub-LLM calls (llm_max_calls_per_step); 0 made, 4 more asked')
                ('PROMPT_TOO_LARGE', 'prompt 0 has 51 characters (system prompt included), more than llm_max_prompt_chars 50: send a smaller chunk')
                ['answer: A', 'answer: B']
                ('LIMIT_EXCEEDED', 'a step may make 3 sub-LLM calls (llm_max_calls_per_step); 2 made, 2 more asked')
                """);
        JsonNode usage = reply.path("llm_usage");
        assertThat(usage.path("calls").asInt()).isEqualTo(2);
        assertThat(usage.path("refused").asInt()).isEqualTo(3);
        assertThat(usage.path("guardrail_events"))
                .extracting(e -> e.path("guardrail").asText())
                .containsExactly("llm_max_calls_per_step", "llm_max_prompt_chars", "llm_max_calls_per_step");
        ObjectNode next = run(session, """
                print(llm_query_batched(["e", "f"]))
                try:
                    llm_query("g")
                except LLMQueryError as e:
                    print(e.code, e)
                """);
        assertThat(next.path("stdout").asText()).isEqualTo("""
                ['answer: E', 'answer: F']
                LIMIT_EXCEEDED this session may make 4 sub-LLM calls in total (llm_max_calls); 4 made, 1 more asked
                """);
        assertThat(TestReplies.trace(session.trace(0, 10))
                        .path("steps")
                        .path(1)
                        .path("llm_usage")
                        .path("guardrail_events")
                        .path(0)
                        .path("guardrail")
                        .asText())
                .isEqualTo("llm_max_calls");
    }

    @Test
    void aSpentTokenBudgetRefusesFurtherCalls() {
        Session session = session(new LlmLimits(50, 50, 2, 1000, 10L, Duration.ofSeconds(10), 1));
        ObjectNode reply = run(session, """
                print(llm_query("twelve chars"))
                try:
                    llm_query("more")
                except LLMQueryError as e:
                    print(e.code, e)
                """);
        assertThat(reply.path("stdout").asText()).isEqualTo("""
                answer: TWELVE CHARS
                LIMIT_EXCEEDED this session's sub-LLM token budget (llm_token_budget 10) is spent: 15 tokens used
                """);
    }

    @Test
    void backendErrorsTimeoutsAndPartialBatchesAreSurfaced() {
        api.behaviour = request -> switch (ChatCompletionsServer.userPrompt(request)) {
            case "bad" -> new ChatCompletionsServer.Reply(500, "{\"error\":{\"message\":\"model overloaded\"}}", 0);
            case "slow" -> ChatCompletionsServer.completion("late", 1, 1, 5000);
            default -> ChatCompletionsServer.upperCase(request);
        };
        Session session = session(new LlmLimits(50, 50, 4, 1000, null, Duration.ofSeconds(1), 1));
        ObjectNode reply = run(session, """
                try:
                    llm_query("bad")
                except LLMQueryError as e:
                    print(e.code, e)
                try:
                    llm_query_batched(["ok", "slow", "bad"])
                except LLMQueryError as e:
                    print(e.code, e.answers, [(i, c) for i, c, m in e.errors])
                    print(e)
                """);
        String[] lines = reply.path("stdout").asText().split("\n");
        assertThat(lines[0])
                .startsWith("BACKEND_ERROR the OpenAI-compatible API at http://127.0.0.1:")
                .endsWith("answered HTTP 500: model overloaded");
        assertThat(lines[1]).isEqualTo("TIMEOUT ['answer: OK', None, None] [(1, 'TIMEOUT'), (2, 'BACKEND_ERROR')]");
        assertThat(lines[2])
                .isEqualTo(
                        "2 of 3 prompts failed; prompt 1: the openai backend did not answer within llm_timeout_s (1 s)");
        assertThat(reply.path("llm_usage").path("failed").asInt()).isEqualTo(3);
        JsonNode calls =
                TestReplies.trace(session.trace(0, 10)).path("steps").path(0).path("llm_calls");
        assertThat(calls).hasSize(4);
        assertThat(calls)
                .filteredOn(c -> c.path("prompt").asText().equals("slow"))
                .singleElement()
                .satisfies(c -> assertThat(c.path("error").asText()).startsWith("TIMEOUT: "));
        assertThat(reply.path("llm_usage")
                        .path("guardrail_events")
                        .path(0)
                        .path("guardrail")
                        .asText())
                .isEqualTo("llm_timeout_s");
    }

    @Test
    void llmQueryFromCodeRunByACallbackIsRefusedPastTheDepthLimit() {
        Session inner = sessions.resolve(null, "inner");
        Session outer = sessions.resolve(null, "outer");
        HostCallbacks nested = (kind, request) ->
                JSON.getNodeFactory().textNode(run(inner, """
                try:
                    llm_query("deeper")
                except LLMQueryError as e:
                    print(e.code, e)
                """).path("stdout").asText());
        ObjectNode reply = TestReplies.step(outer.execute(
                new StepRequest("""
                import rlm_harness as h
                print(h.KERNEL.callbacks.call("nested", {}), end="")
                print(llm_query("top"))
                """, Duration.ofSeconds(30), StepExtras.of(null, nested, null), CallContext.NONE)));
        assertThat(reply.path("stdout").asText()).isEqualTo("""
                DEPTH_LIMIT sub-LLM calls nest at most 1 deep here (llm_max_depth)
                answer: TOP
                """);
        assertThat(api.seen()).hasSize(1);
    }

    @Test
    void theKeyIsNeverVisibleToKernelCode() {
        Session session = sessions.resolve(null, "c");
        ObjectNode reply = run(session, """
                import os
                found = [k for k, v in os.environ.items() if "sk-secret" in v]
                with open("/proc/self/environ", "rb") as f:
                    found += ["proc"] if b"sk-secret" in f.read() else []
                print(found, llm_query("hi"))
                """);
        assertThat(reply.path("stdout").asText()).isEqualTo("[] answer: HI\n");
        assertThat(reply.toString()).doesNotContain(KEY);
        assertThat(api.seen().getFirst().headers().getFirst("Authorization")).isEqualTo("Bearer " + KEY);
    }

    @Test
    void withoutABackendLlmQueryExistsAndSaysHowToEnableIt() {
        Sessions none = new Sessions(new KernelFactory(TestSettings.in(dir.resolve("b")), new ProcessLauncher(), JSON));
        try {
            ObjectNode reply = run(none.resolve(null, "c"), """
                    try:
                        llm_query("hi")
                    except LLMQueryError as e:
                        print(e.code, e)
                    print(sorted(n for n in dir() if not n.startswith("_")))
                    """);
            assertThat(reply.path("stdout").asText())
                    .startsWith("NOT_CONFIGURED no model API is configured and this MCP client does not sample")
                    .contains("RLM_LLM_BASE_URL")
                    .contains("rlm_answer")
                    .endsWith("['FINAL', 'FINAL_VAR', 'SHOW_VARS', 'llm_query', 'llm_query_batched', 'rlm_query', "
                            + "'rlm_query_batched']\n");
            assertThat(reply.path("llm_usage").path("refused").asInt()).isEqualTo(1);
        } finally {
            none.close();
        }
    }

    @Test
    void badArgumentsAreTypeErrorsBeforeAnyCall() {
        ObjectNode reply = run(sessions.resolve(null, "c"), """
                for call in (lambda: llm_query(3), lambda: llm_query("a", max_tokens=0),
                             lambda: llm_query_batched("abc"), lambda: llm_query_batched(["a", 1])):
                    try:
                        call()
                    except TypeError as e:
                        print(e)
                print(llm_query_batched([]))
                """);
        assertThat(reply.path("stdout").asText()).isEqualTo("""
                prompt must be a str, not int
                max_tokens must be a positive int or None, not 0
                prompts must be a list of str, not a str: use llm_query for one prompt
                prompts[1] must be a str, not int
                []
                """);
        assertThat(api.seen()).isEmpty();
    }
}

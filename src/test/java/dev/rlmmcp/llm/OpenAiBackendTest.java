package dev.rlmmcp.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class OpenAiBackendTest {

    private static final String KEY = "sk-test-0123456789abcdef";

    private ChatCompletionsServer server;
    private OpenAiBackend backend;

    @BeforeEach
    void start() throws Exception {
        server = new ChatCompletionsServer();
        backend = new OpenAiBackend(
                new OpenAiConfig(URI.create(server.baseUrl() + "/"), KEY, "small-model"), new ObjectMapper());
    }

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void postsAChatCompletionWithTheKeyAndReadsTheAnswerAndUsage() throws Exception {
        LlmAnswer answer = backend.complete(new LlmRequest("summarise é", "be brief", 50, null), Duration.ofSeconds(5));
        assertThat(answer.text()).isEqualTo("answer: SUMMARISE É");
        assertThat(answer.inputTokens()).isEqualTo(11);
        assertThat(answer.outputTokens()).isEqualTo(3);
        assertThat(answer.model()).isEqualTo("test-model");
        ChatCompletionsServer.Seen seen = server.seen().getFirst();
        assertThat(seen.path()).isEqualTo("/v1/chat/completions");
        assertThat(seen.headers().getFirst("Authorization")).isEqualTo("Bearer " + KEY);
        assertThat(seen.headers().getFirst("Content-Type")).isEqualTo("application/json");
        assertThat(seen.body().toString()).isEqualTo("""
                {"model":"small-model","messages":[{"role":"system","content":"be brief"},\
                {"role":"user","content":"summarise é"}],"max_tokens":50}""");
    }

    @Test
    void aModelNamedInTheCallWinsAndNoKeyMeansNoAuthorizationHeader() throws Exception {
        OpenAiBackend keyless =
                new OpenAiBackend(new OpenAiConfig(server.baseUrl(), null, "small-model"), new ObjectMapper());
        keyless.complete(new LlmRequest("hi", null, null, "big-model"), Duration.ofSeconds(5));
        ChatCompletionsServer.Seen seen = server.seen().getFirst();
        assertThat(seen.headers().containsKey("Authorization")).isFalse();
        assertThat(seen.body().toString()).isEqualTo("""
                {"model":"big-model","messages":[{"role":"user","content":"hi"}]}""");
    }

    @Test
    void anErrorStatusIsReportedWithTheApisMessageAndNeverTheKey() {
        server.behaviour = request -> new ChatCompletionsServer.Reply(
                429, "{\"error\":{\"message\":\"Rate limit reached for key " + KEY + "?\"}}", 0);
        assertThatThrownBy(() -> backend.complete(new LlmRequest("hi", null, null, null), Duration.ofSeconds(5)))
                .isInstanceOf(LlmException.class)
                .hasMessageContaining("answered HTTP 429: Rate limit reached for key ***?")
                .hasMessageNotContaining(KEY)
                .extracting(e -> ((LlmException) e).code())
                .isEqualTo("BACKEND_ERROR");
        server.behaviour = request -> new ChatCompletionsServer.Reply(200, "{\"choices\":[]}", 0);
        assertThatThrownBy(() -> backend.complete(new LlmRequest("hi", null, null, null), Duration.ofSeconds(5)))
                .hasMessageContaining("no choices[0].message.content");
    }

    @Test
    void aSlowApiTimesOutAndAnUnreachableOneIsABackendError() throws Exception {
        server.behaviour = request -> ChatCompletionsServer.completion("late", 1, 1, 3000);
        assertThatThrownBy(() -> backend.complete(new LlmRequest("hi", null, null, null), Duration.ofMillis(300)))
                .extracting(e -> ((LlmException) e).code())
                .isEqualTo("TIMEOUT");
        URI closed = server.baseUrl();
        server.close();
        OpenAiBackend gone = new OpenAiBackend(new OpenAiConfig(closed, KEY, "m"), new ObjectMapper());
        assertThatThrownBy(() -> gone.complete(new LlmRequest("hi", null, null, null), Duration.ofSeconds(5)))
                .hasMessageContaining("cannot reach")
                .extracting(e -> ((LlmException) e).code())
                .isEqualTo("BACKEND_ERROR");
    }

    @Test
    void theConfigNeverShowsTheKey() {
        assertThat(new OpenAiConfig(server.baseUrl(), KEY, "m").toString())
                .doesNotContain(KEY)
                .contains("***");
    }
}

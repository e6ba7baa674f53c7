package dev.rlmmcp.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.kernel.channel.CallbackException;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Which backend a step's llm_query calls go to, by mode and by what the caller offers. */
class LlmServiceTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** What a client answering sampling would be; the real one is exercised end to end in LlmQueryIT. */
    private static final LlmBackend CLIENT = new LlmBackend() {
        @Override
        public String name() {
            return "sampling";
        }

        @Override
        public LlmAnswer complete(LlmRequest request, Duration timeout) {
            return new LlmAnswer("client says " + request.prompt(), null, null, "client-model");
        }
    };

    private ChatCompletionsServer server;
    private OpenAiBackend api;

    @BeforeEach
    void start() throws Exception {
        server = new ChatCompletionsServer();
        api = new OpenAiBackend(new OpenAiConfig(server.baseUrl(), null, "m"), JSON);
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private static String ask(LlmService service, LlmBackend client) throws Exception {
        JsonNode request = JSON.readTree("{\"prompts\": [\"hi\"]}");
        LlmStep step = service.step(new LlmAccount(LlmLimits.DEFAULTS), client);
        return step.handle("llm", request).path("answers").path(0).path("text").asText();
    }

    private static LlmService service(LlmService.Mode mode, LlmBackend api) {
        return new LlmService(mode, api, LlmLimits.DEFAULTS, JSON);
    }

    @Test
    void autoPrefersTheConfiguredApiThenTheClientsSampling() throws Exception {
        assertThat(ask(service(LlmService.Mode.AUTO, api), CLIENT)).isEqualTo("answer: HI");
        assertThat(ask(service(LlmService.Mode.AUTO, null), CLIENT)).isEqualTo("client says hi");
        assertThatThrownBy(() -> ask(service(LlmService.Mode.AUTO, null), null))
                .isInstanceOf(CallbackException.class)
                .hasMessageContaining("RLM_LLM_BASE_URL")
                .extracting(e -> ((CallbackException) e).code())
                .isEqualTo("NOT_CONFIGURED");
    }

    @Test
    void theAgentAnswersWhereNeitherAnApiNorTheClientCan() {
        assertThat(service(LlmService.Mode.AUTO, null).agentAnswers(null)).isTrue();
        assertThat(service(LlmService.Mode.AUTO, null).agentAnswers(CLIENT)).isFalse();
        assertThat(service(LlmService.Mode.AUTO, api).agentAnswers(null)).isFalse();
        assertThat(service(LlmService.Mode.AGENT, api).agentAnswers(CLIENT)).isTrue();
        assertThat(service(LlmService.Mode.SAMPLING, null).agentAnswers(null)).isFalse();
        assertThat(service(LlmService.Mode.OFF, null).agentAnswers(null)).isFalse();
    }

    @Test
    void forcedModesUseOnlyTheirBackend() throws Exception {
        assertThat(ask(service(LlmService.Mode.SAMPLING, api), CLIENT)).isEqualTo("client says hi");
        assertThatThrownBy(() -> ask(service(LlmService.Mode.SAMPLING, api), null))
                .hasMessageContaining("did not declare the sampling capability");
        assertThat(ask(service(LlmService.Mode.OPENAI, api), CLIENT)).isEqualTo("answer: HI");
        assertThatThrownBy(() -> ask(service(LlmService.Mode.OFF, api), CLIENT)).hasMessageContaining("switched off");
        assertThatThrownBy(() -> service(LlmService.Mode.OPENAI, null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LlmService.Mode.of("gpt"))
                .hasMessageContaining("auto, sampling, openai, agent or off");
    }
}

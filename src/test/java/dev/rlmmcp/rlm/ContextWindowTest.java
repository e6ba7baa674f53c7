package dev.rlmmcp.rlm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rlmmcp.llm.LlmException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A prompt larger than the model's context window (--llm-context-window) is refused before it is sent. */
class ContextWindowTest extends LimitsRig {

    @Test
    void aPromptLargerThanTheModelsWindowIsRefusedBeforeItIsSentAndAChildFailsOnce() {
        start(
                t -> {
                    if ("small".equals(t.request().model())) {
                        // what a provider answers to a prompt larger than its window
                        throw new LlmException("BACKEND_ERROR", "HTTP 400: maximum context length exceeded");
                    }
                    return answering("""
                            for call in (lambda: rlm_query("y" * 8000, "x", model="small"),
                                         lambda: llm_query("z" * 8000, model="small")):
                                try:
                                    call()
                                except Exception as e:
                                    out.append(f"{e.code}: {e}")
                            """);
                },
                new RlmConfig(limits(2, Duration.ofMinutes(1), null), Map.of(), Map.of("small", 1000), 128_000),
                8);
        RunOutcome outcome = solve("q");

        assertThat(model.seen).noneMatch(t -> "small".equals(t.request().model()));
        assertThat(outcome.answer().lines())
                .hasSize(2)
                .allSatisfy(line -> assertThat(line)
                        .startsWith("PROMPT_TOO_LARGE")
                        .contains("context window of 1000 tokens")
                        .contains("--llm-context-window"));
        assertThat(outcome.figures().children()).isZero();
    }
}

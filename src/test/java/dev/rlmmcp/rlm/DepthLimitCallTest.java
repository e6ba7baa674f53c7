package dev.rlmmcp.rlm;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** rlm_query at the depth limit is an llm_query of the prompt with the context's value, under llm_query's checks. */
class DepthLimitCallTest extends LimitsRig {

    @Test
    void rlmQueryAtTheDepthLimitIsAnLlmQueryOfTheContextsValueWithItsChecks() {
        start(
                t -> {
                    if (t.rlm()) {
                        return answering("""
                                lines = "\\n".join(f"line {i}" for i in range(200))
                                out.append(rlm_query("How many lines?", context=lines))
                                try:
                                    rlm_query("big", context="w" * 300_000)
                                except Exception as e:
                                    out.append(e.code)
                                out.append(rlm_query_batched(["many"] * 120)[0])
                                """);
                    }
                    return String.valueOf(
                            t.last().lines().filter(l -> l.startsWith("line ")).count());
                },
                new RlmConfig(limits(1, Duration.ofMinutes(1), null), Map.of(), Map.of(), 128_000),
                8);
        RunOutcome outcome = solve("q");

        assertThat(outcome.answer().lines().toList())
                .hasSize(3)
                .satisfies(l -> assertThat(l.get(0)).isEqualTo("200"))
                .satisfies(l -> assertThat(l.get(1)).isEqualTo("PROMPT_TOO_LARGE"))
                .satisfies(l -> assertThat(l.get(2))
                        .startsWith("[rlm_query failed: LIMIT_EXCEEDED")
                        .contains("llm_max_calls_per_step"));
        assertThat(model.seen.stream().filter(t -> !t.rlm())).hasSize(1);
    }
}

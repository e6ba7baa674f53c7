package dev.rlmmcp.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rlmmcp.base.Text;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class GuardrailsTest {

    @Test
    void maxStepsRefusesTheStepWhoseIndexReachesIt() {
        Guardrails g = new Guardrails(new Limits(2, null, null, null));
        assertThat(g.beforeStep()).isNull();
        assertThat(g.afterStep(1, 0)).isNull();
        assertThat(g.beforeStep()).isNull();
        assertThat(g.afterStep(1, 0)).isNull();
        assertThat(g.beforeStep()).isEqualTo(Guardrails.MAX_STEPS);
    }

    @Test
    void runtimeStopsOncePassedAndCutsTheNextStepsTimeout() {
        Guardrails g = new Guardrails(new Limits(null, 1000L, null, null));
        assertThat(g.stepTimeout(Duration.ofSeconds(30))).isEqualTo(Duration.ofMillis(1000));
        assertThat(g.afterStep(400, 0)).isNull();
        assertThat(g.stepTimeout(Duration.ofSeconds(30))).isEqualTo(Duration.ofMillis(600));
        assertThat(g.stepTimeout(Duration.ofMillis(100))).isEqualTo(Duration.ofMillis(100));
        assertThat(g.afterStep(600, 0)).isNull();
        assertThat(g.afterStep(1, 0)).isEqualTo(Guardrails.TIMEOUT);
    }

    @Test
    void budgetCountsStepAndLoadBytesAndStopsOncePassed() {
        Guardrails g = new Guardrails(new Limits(null, null, 100L, null));
        assertThat(g.afterLoad(60)).isNull();
        assertThat(g.afterStep(0, 40)).isNull();
        assertThat(g.ioBytes()).isEqualTo(100);
        assertThat(g.afterStep(0, 1)).isEqualTo(Guardrails.BUDGET);
    }

    @Test
    void noLimitsNeverStop() {
        Guardrails g = new Guardrails(Limits.NONE);
        for (int i = 0; i < 1000; i++) {
            assertThat(g.afterStep(1_000_000, 1_000_000)).isNull();
        }
        assertThat(g.beforeStep()).isNull();
    }

    @Test
    void utf8LengthCountsBytes() {
        assertThat(Text.utf8Length("abc")).isEqualTo(3);
        assertThat(Text.utf8Length("é")).isEqualTo(2);
        assertThat(Text.utf8Length("€")).isEqualTo(3);
        assertThat(Text.utf8Length("😀")).isEqualTo(4);
    }
}

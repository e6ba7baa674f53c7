package dev.rlmmcp.rlm;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * max_time_s bounds the waits for a kernel place, and a child whose ancestors hold every place fails
 * at once rather than wait for one of them.
 */
class KernelWaitTimeTest extends LimitsRig {

    @Test
    void aGrandchildWhoseAncestorsHoldEveryKernelPlaceFailsAtOnce() throws Exception {
        start(
                t -> switch (t.question()) {
                    case "root" -> answering("out.append(rlm_query('child', 'x'))");
                    case "child" -> answering("""
                                try:
                                    out.append(rlm_query('grandchild', 'y'))
                                except Exception as e:
                                    out.append(f"{e.code}: {e}")
                                """);
                    default -> answering("out.append('leaf')");
                },
                new RlmConfig(limits(3, Duration.ofSeconds(20), null), Map.of(), Map.of(), 128_000),
                2);
        long t0 = System.nanoTime();
        RunOutcome outcome = within(Duration.ofSeconds(15), () -> solve("root"));

        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
        assertThat(outcome.answer())
                .startsWith("CAPACITY")
                .contains("--max-kernels")
                .contains("2");
    }

    @Test
    void waitsForAKernelPlaceEndWithTheRunsTime() throws Exception {
        start(
                t -> switch (t.question()) {
                    case "root" -> answering("out.extend(rlm_query_batched(['child'] * 2, ['a', 'b']))");
                    case "child" -> answering("""
                                import time
                                time.sleep(0.5)
                                out.append(rlm_query('grandchild', 'y'))
                                """);
                    default -> answering("out.append('leaf')");
                },
                new RlmConfig(limits(3, Duration.ofSeconds(4), null), Map.of(), Map.of(), 128_000),
                3);
        long t0 = System.nanoTime();
        RunOutcome outcome = within(Duration.ofSeconds(30), () -> solve("root"));

        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(9));
        assertThat(outcome.stoppedBy()).as(outcome.toString()).isEqualTo("max_time");
    }
}

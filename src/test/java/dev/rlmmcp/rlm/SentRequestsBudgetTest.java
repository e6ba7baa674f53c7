package dev.rlmmcp.rlm;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The budgets count every request sent, and no request is sent once spent plus reserved reach a budget. */
class SentRequestsBudgetTest extends LimitsRig {

    @Test
    void noMoreRequestsAreSentOnceSpentAndReservedReachTheBudget() {
        start(
                t -> t.rlm() ? answering("""
                                try:
                                    llm_query_batched([f"{i:04d}" + "p" * 3996 for i in range(40)], concurrency=8)
                                except Exception as e:
                                    out.append(e.code)
                                """) : sleep(300, "a"),
                new RlmConfig(limits(2, Duration.ofMinutes(1), 3500L), Map.of(), Map.of(), 128_000),
                8);
        RunOutcome outcome = solve("q");

        long sent = model.seen.stream().filter(t -> !t.rlm()).count();
        long rootTurn = (model.seen.getFirst().request().chars() + 3) / 4;
        // the first turn, then as many 1000-token calls as fit in what is left of the 3500 at send time
        assertThat(sent).as(outcome.toString()).isEqualTo((3500 - rootTurn + 999) / 1000);
        assertThat(outcome.figures().inputTokens()).isLessThanOrEqualTo(3500 + 1000);
        assertThat(outcome.stoppedBy()).isEqualTo("max_input_tokens");
    }

    @Test
    void aRequestInFlightWhenABudgetStopsTheRunIsCounted() throws Exception {
        start(
                t -> switch (t.question()) {
                    case "root" -> answering("out.extend(rlm_query_batched(['slow', 'fast'], ['a', 'b']))");
                    case "slow" -> sleep(30_000, "never");
                    default -> sleep(1500, answering("out.append('fast')"));
                },
                new RlmConfig(limits(2, Duration.ofMinutes(1), 5000L), Map.of(), Map.of(), 128_000),
                8);
        model.tokensFor = t -> switch (t.question()) {
            case "root" -> 100;
            case "fast" -> 10_000;
            default -> -1;
        };
        RunOutcome outcome = within(Duration.ofSeconds(20), () -> solve("root"));

        long slow = model.seen.stream()
                .filter(t -> t.question().equals("slow"))
                .mapToLong(t -> (t.request().chars() + 3) / 4)
                .sum();
        assertThat(slow).isPositive();
        assertThat(outcome.stoppedBy()).isEqualTo("max_input_tokens");
        assertThat(outcome.figures().inputTokens()).isEqualTo(100 + 10_000 + slow);
    }
}

package dev.rlmmcp.rlm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rlmmcp.llm.LlmException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A run's reservations: what requests in flight hold against its budgets before they are charged. */
class RunReservationTest {

    private static Run run(Long maxInputTokens, Double maxCostUsd) {
        RunLimits d = RunLimits.DEFAULTS;
        RunLimits limits =
                new RunLimits(2, 30, 256, Duration.ofMinutes(1), maxInputTokens, null, maxCostUsd, 5, 20_000, 0.85, 8);
        return new Run(
                limits,
                new RlmConfig(d, Map.of("m", new ModelPrice(1_000_000, 0)), Map.of(), 128_000),
                RunProgress.NONE);
    }

    @Test
    void noRequestIsSentOnceSpentPlusReservedReachTheBudgetAndTheRefusalNamesIt() throws Exception {
        Run run = run(1000L, null);
        Run.Reservation first = run.reserve("m", 600, 0, false);
        run.reserve("m", 600, 0, false);
        assertThatThrownBy(() -> run.reserve("m", 1, 0, false)).isInstanceOfSatisfying(LlmException.class, e -> {
            assertThat(e.code()).isEqualTo("LIMIT_EXCEEDED");
            assertThat(e.limit()).isEqualTo("max_input_tokens");
            assertThat(e.getMessage()).contains("1200 more").contains("max_input_tokens");
        });
        run.release(first);
        run.reserve("m", 1, 0, false);
    }

    @Test
    void aTurnWaitsForTheRequestsInFlightAndASentRequestIsCharged() throws Exception {
        Run run = run(null, 1.0);
        Run.Reservation held = run.reserve("m", 1, 0, false);
        CompletableFuture<Run.Reservation> turn = CompletableFuture.supplyAsync(() -> {
            try {
                return run.reserve("m", 1, 0, true);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(200);
        assertThat(turn).isNotDone();
        run.settle(held, null, 0, 0); // the request answered with nothing to pay: room for the turn
        assertThat(turn.get(5, TimeUnit.SECONDS).cost()).isEqualTo(1.0);
        assertThat(run.figures().costUsd()).isZero();
    }
}

package dev.rlmmcp.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.llm.PendingCalls;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A step run for the agent: stands in for a kernel step that asks sub-calls through the session's pending calls. */
class AgentStepsTest {

    @TempDir
    Path markers;

    /** A step that asks {@code prompts} as one batch, printing {@code printed} first, and keeps the answers. */
    private static java.util.function.Function<CallContext, StepResult> asking(
            AgentSteps steps, List<String> answers, String printed, String... prompts) {
        return context -> {
            List<PendingCalls.Asked> batch = new ArrayList<>();
            for (String p : prompts) {
                batch.add(new PendingCalls.Asked(p, null, null));
            }
            for (PendingCalls.Ticket t : steps.calls().ask("llm", batch, printed)) {
                try {
                    answers.add(t.answer().get(10, TimeUnit.SECONDS));
                } catch (InterruptedException | ExecutionException | java.util.concurrent.TimeoutException e) {
                    answers.add("failed: " + e.getCause());
                }
            }
            return null;
        };
    }

    @Test
    void aStepSuspendsWithItsWholeBatchAndTheLastAnswerGetsTheRest() {
        AgentSteps steps = new AgentSteps("s-1", markers);
        List<String> answers = new ArrayList<>();
        StepOutcome first = steps.run(asking(steps, answers, "so far\n", "a", "b", "c"), CallContext.NONE);

        assertThat(first).isInstanceOf(StepOutcome.Suspended.class);
        StepOutcome.Suspended suspended = (StepOutcome.Suspended) first;
        assertThat(suspended.pending()).extracting(PendingCalls.Call::id).containsExactly("q1", "q2", "q3");
        assertThat(suspended.printed()).isEqualTo("so far\n");
        assertThat(markers.resolve("s-1")).hasContent("q1, q2, q3");

        RlmException refused = steps.refusal();
        assertThat(refused.code()).isEqualTo(ErrorCode.STEP_SUSPENDED);
        assertThat(refused.getMessage()).contains("q1, q2, q3");

        steps.calls().answer("q1", "A");
        steps.calls().answer("q2", "B");
        assertThat(steps.refusal()).as("q3 is still pending").isNotNull();
        steps.calls().refuse("q3", "REFUSED", "no");
        StepOutcome rest = steps.resume(CallContext.NONE);

        assertThat(rest).isInstanceOf(StepOutcome.Done.class);
        assertThat(((StepOutcome.Done) rest).shown()).isEqualTo("so far\n");
        assertThat(answers).containsExactly("A", "B", "failed: dev.rlmmcp.llm.LlmException: no");
        assertThat(steps.refusal()).isNull();
        assertThat(markers.resolve("s-1")).doesNotExist();
        assertThatThrownBy(() -> steps.resume(CallContext.NONE))
                .hasMessageContaining("has no step waiting for answers");
    }

    @Test
    void aStepThatEndsWhileNobodyWaitsIsToldOnce() throws Exception {
        AgentSteps steps = new AgentSteps("s-2", markers);
        CountDownLatch ended = new CountDownLatch(1);
        steps.run(
                context -> {
                    var t = steps.calls()
                            .ask("llm", List.of(new PendingCalls.Asked("p", null, null)), "")
                            .getFirst();
                    try {
                        t.answer().get(100, TimeUnit.MILLISECONDS);
                    } catch (Exception e) {
                        steps.calls().drop(t.id()); // as the backend does when the agent's time is up
                    }
                    ended.countDown();
                    return null;
                },
                CallContext.NONE);
        assertThat(ended.await(10, TimeUnit.SECONDS)).isTrue();
        Thread.sleep(50);
        assertThat(steps.now()).isInstanceOf(StepOutcome.Done.class);
        assertThat(steps.now()).isNull();
    }

    @Test
    void aStopWhileAStepWaitsKeepsItsMarkerForTheNextStartToTell() throws Exception {
        AgentSteps steps = new AgentSteps("s-3", markers);
        steps.run(asking(steps, new ArrayList<>(), "", "p"), CallContext.NONE);
        assertThat(steps.stoppingWhileSuspended()).isTrue();
        steps.calls().refuseAll("ABANDONED", "stop"); // the kernel dies with the server: the step ends
        Thread.sleep(100);
        assertThat(markers.resolve("s-3")).exists();

        AgentSteps after = new AgentSteps("s-3", markers);
        assertThat(after.takeLostAtStop()).isEqualTo("q1");
        assertThat(after.takeLostAtStop()).isNull();
        assertThat(Files.exists(markers.resolve("s-3"))).isFalse();
        assertThat(new AgentSteps("s-4", markers).stoppingWhileSuspended()).isFalse();
    }

    @Test
    void cancellingTheWaitingCallCancelsTheStep() throws Exception {
        AgentSteps steps = new AgentSteps("s-5", null);
        CallContext caller = CallContext.create();
        CountDownLatch cancelled = new CountDownLatch(1);
        Thread waiter = Thread.ofVirtual()
                .start(() -> steps.run(
                        context -> {
                            context.onCancel(cancelled::countDown);
                            return null;
                        },
                        caller));
        Thread.sleep(50);
        caller.cancel();
        waiter.join(5_000);
        assertThat(cancelled.getCount()).isLessThanOrEqualTo(1);
    }
}

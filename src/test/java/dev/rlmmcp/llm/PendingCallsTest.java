package dev.rlmmcp.llm;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class PendingCallsTest {

    @Test
    void callsAreAskedAsABatchAnsweredOnceAndHeardOf() throws Exception {
        PendingCalls calls = new PendingCalls();
        AtomicInteger changes = new AtomicInteger();
        calls.listen(changes::incrementAndGet);
        List<PendingCalls.Ticket> tickets = calls.ask(
                "rlm",
                List.of(
                        new PendingCalls.Asked("first prompt", "sys", null),
                        new PendingCalls.Asked("x".repeat(300), null, "s-c")),
                "printed\n");
        assertThat(changes).hasValue(1);
        assertThat(calls.open()).extracting(PendingCalls.Call::id).containsExactly("q1", "q2");
        assertThat(calls.open().get(0).chars()).isEqualTo("first prompt".length() + 3);
        assertThat(calls.open().get(1).preview(10)).isEqualTo("xxxxxxxxxx…");
        assertThat(calls.open().get(1).childSession()).isEqualTo("s-c");
        assertThat(calls.takePrinted()).isEqualTo("printed\n");
        assertThat(calls.takePrinted()).isEmpty();

        assertThat(calls.answer("q1", "one")).isTrue();
        assertThat(calls.answer("q1", "again")).isFalse();
        assertThat(tickets.get(0).answer().get()).isEqualTo("one");
        assertThat(calls.refuseAll("CANCELLED", "given up")).isEqualTo(1);
        try {
            tickets.get(1).answer().get();
        } catch (ExecutionException e) {
            assertThat(((LlmException) e.getCause()).code()).isEqualTo("CANCELLED");
        }
        assertThat(calls.open()).isEmpty();
        assertThat(calls.ask("llm", List.of(new PendingCalls.Asked("p", null, null)), null)
                        .getFirst()
                        .id())
                .as("ids go on within the session")
                .isEqualTo("q3");
    }

    @Test
    void anAgentWhoseAnswerDoesNotComeGivesUpWithTimeout() throws Exception {
        PendingCalls calls = new PendingCalls();
        AgentBackend agent = new AgentBackend(calls, java.time.Duration.ofMillis(100));
        var ticket = agent.ask("llm", List.of(new PendingCalls.Asked("p", null, null)), null)
                .getFirst();
        try {
            agent.await(ticket, null);
            throw new AssertionError("no timeout");
        } catch (LlmException e) {
            assertThat(e.code()).isEqualTo("TIMEOUT");
            assertThat(e.getMessage()).contains("--agent-wait-s");
        }
        assertThat(calls.open()).as("the call given up is no longer pending").isEmpty();
        var bounded = agent.within(() -> java.time.Duration.ofMillis(50));
        var second = bounded.ask("llm", List.of(new PendingCalls.Asked("p", null, null)), null)
                .getFirst();
        try {
            bounded.await(second, null);
            throw new AssertionError("no timeout");
        } catch (LlmException e) {
            assertThat(e.limit()).isEqualTo("max_time_s");
        }
    }
}

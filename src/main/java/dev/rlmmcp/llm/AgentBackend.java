package dev.rlmmcp.llm;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * The agent as the model: a sub-call becomes a request on the session's {@link PendingCalls}, which the
 * calling agent reads in a tool reply and answers with a tool call. A batch is asked whole. Each call
 * waits at most {@code wait} (or what its run has left, if less) and then raises TIMEOUT in the code.
 */
public final class AgentBackend implements LlmBackend {

    private final PendingCalls calls;
    private final Duration wait;
    /** What the run this step belongs to has left of its time (null: no limit). */
    private final Supplier<Duration> runLeft;

    public AgentBackend(PendingCalls calls, Duration wait) {
        this(calls, wait, () -> null);
    }

    private AgentBackend(PendingCalls calls, Duration wait, Supplier<Duration> runLeft) {
        this.calls = calls;
        this.wait = wait;
        this.runLeft = runLeft;
    }

    /** This backend, its waits bounded by what a run has left ({@code left} gives null for no limit). */
    public AgentBackend within(Supplier<Duration> left) {
        return new AgentBackend(calls, wait, left);
    }

    @Override
    public String name() {
        return "agent";
    }

    public PendingCalls calls() {
        return calls;
    }

    @Override
    public LlmAnswer complete(LlmRequest request, Duration timeout) throws LlmException, InterruptedException {
        String prompt = request.messages().size() == 1 ? request.prompt() : transcript(request);
        PendingCalls.Ticket ticket = calls.ask(
                        "llm", List.of(new PendingCalls.Asked(prompt, request.system(), null)), null)
                .getFirst();
        return new LlmAnswer(await(ticket, null), null, null, "agent");
    }

    /** Asks every prompt of a batch at once, of {@code kind}; the answers are awaited with {@link #await}. */
    public List<PendingCalls.Ticket> ask(String kind, List<PendingCalls.Asked> batch, String printed) {
        return calls.ask(kind, batch, printed);
    }

    /**
     * The answer to one ticket, waiting at most the agent's time, what the run has left, and {@code asked}
     * (null: no bound of the caller's), whichever is least; a call given up is dropped and raises TIMEOUT.
     */
    public String await(PendingCalls.Ticket ticket, Duration asked) throws LlmException, InterruptedException {
        Duration left = runLeft.get();
        Duration within = asked == null || (left != null && left.compareTo(asked) < 0) ? left : asked;
        Duration limit = within != null && within.compareTo(wait) < 0 ? within : wait;
        try {
            return ticket.answer().get(Math.max(1, limit.toMillis()), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            calls.drop(ticket.id());
            throw new LlmException(
                    "TIMEOUT",
                    within == limit ? "max_time_s" : "agent_wait_s",
                    "the agent did not answer %s within %d s (%s)"
                            .formatted(
                                    ticket.id(),
                                    limit.toSeconds(),
                                    within == limit ? "the run's max_time_s" : "--agent-wait-s"));
        } catch (ExecutionException e) {
            if (e.getCause() instanceof LlmException refused) {
                throw refused;
            }
            throw new LlmException("BACKEND_ERROR", "the agent's answer failed: " + e.getCause());
        } catch (CancellationException e) {
            throw new LlmException("ABANDONED", "the call " + ticket.id() + " was given up");
        } catch (InterruptedException e) {
            calls.drop(ticket.id());
            throw e;
        }
    }

    /** Drops the tickets not answered yet (their step stopped waiting). */
    public void dropAll(List<PendingCalls.Ticket> tickets) {
        for (PendingCalls.Ticket t : tickets) {
            if (!t.answer().isDone()) {
                calls.drop(t.id());
            }
        }
    }

    private static String transcript(LlmRequest request) {
        List<String> turns = new ArrayList<>();
        for (LlmMessage m : request.messages()) {
            turns.add("[" + m.role() + "]\n" + m.content());
        }
        return String.join("\n\n", turns);
    }
}

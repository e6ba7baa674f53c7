package dev.rlmmcp.rlm;

import dev.rlmmcp.llm.LlmAnswer;
import dev.rlmmcp.llm.LlmBackend;
import dev.rlmmcp.llm.LlmException;
import dev.rlmmcp.llm.LlmMessage;
import dev.rlmmcp.llm.LlmRequest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A model that follows a script: {@link Policy} sees each request as a {@link Turn} and writes the
 * reply. Records every request, and the most RLM turns it had in flight at once.
 */
final class ScriptedBackend implements LlmBackend {

    /** One request as a policy sees it: RLM turn or plain call, the RLM's question, which turn, the last user message. */
    record Turn(boolean rlm, String question, int index, String last, LlmRequest request) {}

    @FunctionalInterface
    interface Policy {
        String reply(Turn turn) throws Exception;
    }

    final List<Turn> seen = new CopyOnWriteArrayList<>();
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger peak = new AtomicInteger();
    private final Policy policy;
    volatile long tokensPerCall = -1;
    /** Where set, the tokens a request is answered with (in and out alike; negative: none reported). */
    volatile java.util.function.ToLongFunction<Turn> tokensFor;

    ScriptedBackend(Policy policy) {
        this.policy = policy;
    }

    @Override
    public String name() {
        return "scripted";
    }

    @Override
    public LlmAnswer complete(LlmRequest request, Duration timeout) throws LlmException, InterruptedException {
        boolean rlm = request.system() != null && request.system().contains("Recursive Language Model");
        String first = request.messages().getFirst().content();
        String question = rlm && first.startsWith("Question: ")
                ? first.substring(10, first.indexOf('\n') < 0 ? first.length() : first.indexOf('\n'))
                : request.prompt();
        int index = (int) request.messages().stream()
                        .filter(m -> m.role().equals("assistant"))
                        .count()
                + 1;
        Turn turn = new Turn(rlm, question, index, request.prompt(), request);
        seen.add(turn);
        peak.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
        try {
            String text = policy.reply(turn);
            java.util.function.ToLongFunction<Turn> perTurn = tokensFor;
            long t = perTurn != null ? perTurn.applyAsLong(turn) : tokensPerCall;
            return new LlmAnswer(text, t >= 0 ? t : null, t >= 0 ? t : null, "scripted");
        } catch (InterruptedException | LlmException e) {
            throw e;
        } catch (Exception e) {
            throw new LlmException("BACKEND_ERROR", e.toString());
        } finally {
            inFlight.decrementAndGet();
        }
    }

    static String repl(String code) {
        return "Let me run this.\n```repl\n" + code.strip() + "\n```\n";
    }

    static boolean hasMessage(LlmRequest r, String text) {
        for (LlmMessage m : r.messages()) {
            if (m.content().contains(text)) {
                return true;
            }
        }
        return false;
    }
}

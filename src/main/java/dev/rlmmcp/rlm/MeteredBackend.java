package dev.rlmmcp.rlm;

import dev.rlmmcp.llm.LlmAnswer;
import dev.rlmmcp.llm.LlmBackend;
import dev.rlmmcp.llm.LlmException;
import dev.rlmmcp.llm.LlmMessage;
import dev.rlmmcp.llm.LlmRequest;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * The session's backend as a run uses it: refused once the run has stopped, or when the prompt cannot
 * fit the model's context window, bounded by the time the run has left, every call's tokens and cost charged to the run; for sub-calls (llm_query, and
 * rlm_query past the depth limit) identical calls answered from the run's cache, and each call told
 * to {@code recorder} for the trajectory.
 */
final class MeteredBackend implements LlmBackend {

    private final Run run;
    private final LlmBackend base;
    /** The depth the calls are made at; -1 for an RLM's own turns (counted as turns, not sub-calls). */
    private final int depth;

    private final Consumer<Trajectory.SubCall> recorder;

    private MeteredBackend(Run run, LlmBackend base, int depth, Consumer<Trajectory.SubCall> recorder) {
        this.run = run;
        this.base = base;
        this.depth = depth;
        this.recorder = recorder;
    }

    /** For an RLM's own turns. */
    static MeteredBackend turns(Run run, LlmBackend base) {
        return new MeteredBackend(run, base, -1, null);
    }

    /** For the plain sub-calls made at {@code depth}, each told to {@code recorder}. */
    static MeteredBackend subCalls(Run run, LlmBackend base, int depth, Consumer<Trajectory.SubCall> recorder) {
        return new MeteredBackend(run, base, depth, recorder);
    }

    @Override
    public String name() {
        return base.name();
    }

    @Override
    public LlmAnswer complete(LlmRequest request, Duration timeout) throws LlmException, InterruptedException {
        if (recorder == null) {
            return charged(request, timeout).answer();
        }
        refuseIfStopped();
        Duration left = run.timeLeft(timeout);
        long started = System.nanoTime();
        boolean[] hit = {false};
        Charged charged;
        try {
            charged = run.cache.get(key(request), () -> call(request, left), () -> {
                hit[0] = true;
                run.cacheHit();
            });
        } catch (LlmException | InterruptedException | RuntimeException e) {
            recorder.accept(new Trajectory.SubCall(
                    "llm",
                    request.prompt(),
                    null,
                    e instanceof LlmException l ? l.code() + ": " + e.getMessage() : e.toString(),
                    request.model(),
                    0,
                    0,
                    null,
                    ms(started),
                    false,
                    null));
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        LlmAnswer a = charged.answer();
        recorder.accept(new Trajectory.SubCall(
                "llm",
                request.prompt(),
                a.text(),
                null,
                a.model(),
                hit[0] ? 0 : charged.in(),
                hit[0] ? 0 : charged.out(),
                hit[0] ? null : charged.cost(),
                ms(started),
                hit[0],
                null));
        return a;
    }

    /** An RLM's turn: the answer with what it was charged (never from the cache). */
    Charged charged(LlmRequest request, Duration timeout) throws LlmException, InterruptedException {
        refuseIfStopped();
        return call(request, run.timeLeft(timeout));
    }

    private void refuseIfStopped() throws LlmException {
        StopReason stopped = run.stopped();
        if (stopped != null) {
            throw new LlmException("LIMIT_EXCEEDED", stopped.wireName(), "the run has stopped: " + run.stopMessage());
        }
    }

    /** An answer with what it was charged. */
    record Charged(LlmAnswer answer, long in, long out, Double cost) {}

    private Charged call(LlmRequest request, Duration timeout) throws LlmException, InterruptedException {
        ContextWindow.check(run.config, request, request.model());
        long estimate = ContextWindow.estimate(request);
        Run.Reservation held = run.reserve(
                request.model(), estimate, request.maxTokens() == null ? 0 : request.maxTokens(), depth < 0);
        LlmAnswer a = sent(request, timeout, held, estimate);
        long in = a.inputTokens() != null ? a.inputTokens() : estimate;
        long out = a.outputTokens() != null ? a.outputTokens() : (a.text().length() + 3) / 4;
        String model = request.model() != null ? request.model() : a.model();
        run.settle(held, model, in, out);
        if (depth >= 0) {
            run.llmCall(depth);
        }
        ModelPrice price = run.config.price(model);
        return new Charged(a, in, out, price == null ? null : price.cost(in, out));
    }

    /**
     * The answer to a request sent; one abandoned after it went (cancelled, timed out) is charged its
     * prompt as estimated, as the provider bills it, and one that failed otherwise releases its estimate.
     */
    private LlmAnswer sent(LlmRequest request, Duration timeout, Run.Reservation held, long estimate)
            throws LlmException, InterruptedException {
        try {
            return base.complete(request, timeout);
        } catch (InterruptedException e) {
            run.settle(held, request.model(), estimate, 0);
            throw e;
        } catch (LlmException e) {
            if ("TIMEOUT".equals(e.code())) {
                run.settle(held, request.model(), estimate, 0);
            } else {
                run.release(held);
            }
            throw e;
        } catch (RuntimeException e) {
            run.release(held);
            throw e;
        }
    }

    private static SubCallCache.Key key(LlmRequest r) {
        return new SubCallCache.Key(
                "llm",
                r.model(),
                r.system(),
                r.messages().stream().map(m -> m.role() + ":" + m.content()).toList(),
                String.valueOf(r.maxTokens()),
                null);
    }

    private static double ms(long started) {
        return Math.round((System.nanoTime() - started) / 1e4) / 100.0;
    }

    static LlmRequest plain(String prompt, String model) {
        return new LlmRequest(java.util.List.of(LlmMessage.user(prompt)), null, null, model);
    }
}

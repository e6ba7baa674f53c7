package dev.rlmmcp.rlm;

import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.llm.LlmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * One root run and everything under it: the limits and budgets they share, the figures so far, why
 * it stopped (the first limit hit, or a cancellation), and what cancelling it must stop. Thread-safe:
 * children run in parallel.
 */
final class Run {

    final String id = UUID.randomUUID().toString().substring(0, 8);
    final RunLimits limits;
    final RlmConfig config;
    final Instant started = Instant.now();
    final SubCallCache cache = new SubCallCache();
    private final long startedNanos = System.nanoTime();
    private final RunProgress progress;
    private final List<Runnable> onCancel = new ArrayList<>();
    private int iterations;
    private int children;
    private int childrenRunning;
    private int depthReached;
    private int llmCalls;
    private int cacheHits;
    private long inputTokens;
    private long outputTokens;
    private double costUsd;
    private boolean costKnown;
    /** What the requests in flight are reckoned to cost, held against the budgets until they are charged. */
    private long reservedIn;

    private long reservedOut;
    private double reservedCost;
    /** The model that answered last: the price of a request that names none. */
    private String answeredBy;

    private StopReason stop;
    private String stopMessage;

    Run(RunLimits limits, RlmConfig config, RunProgress progress) {
        this.limits = limits;
        this.config = config;
        this.progress = progress;
    }

    /** Why the run stopped, or null while it may go on (a passed deadline stops it now). */
    synchronized StopReason stopped() {
        if (stop == null
                && limits.maxTime() != null
                && elapsedNanos() > limits.maxTime().toNanos()) {
            stop(
                    StopReason.MAX_TIME,
                    "the run passed its time limit of %s s (max_time_s)"
                            .formatted(limits.maxTime().toSeconds()));
        }
        return stop;
    }

    synchronized String stopMessage() {
        return stopMessage;
    }

    /** Stops the run for {@code reason}, unless it stopped already; what registered to be cancelled is. */
    void stop(StopReason reason, String message) {
        List<Runnable> cancel;
        synchronized (this) {
            if (stop != null) {
                return;
            }
            stop = reason;
            stopMessage = message;
            cancel = List.copyOf(onCancel);
        }
        cancel.forEach(Runnable::run);
    }

    void cancel() {
        stop(StopReason.CANCELLED, "the run was cancelled");
    }

    /** Runs {@code action} when the run stops (at once if it has); close the registration when done. */
    CallContext.Registration onStop(Runnable action) {
        synchronized (this) {
            if (stop == null) {
                onCancel.add(action);
                return () -> {
                    synchronized (this) {
                        onCancel.remove(action);
                    }
                };
            }
        }
        action.run();
        return () -> {};
    }

    /** What is left of the run's time, at most {@code cap} (null: no cap); null if neither limits it. */
    Duration timeLeft(Duration cap) {
        if (limits.maxTime() == null) {
            return cap;
        }
        Duration left = Duration.ofNanos(Math.max(1_000_000, limits.maxTime().toNanos() - elapsedNanos()));
        return cap == null || left.compareTo(cap) < 0 ? left : cap;
    }

    /** Counts a model call's tokens and cost, and stops the run if a budget is now spent. */
    void charge(String model, long in, long out) {
        add(model, in, out);
        checkBudgets();
    }

    private synchronized void add(String model, long in, long out) {
        ModelPrice price = config.price(model);
        if (model != null) {
            answeredBy = model;
        }
        inputTokens += in;
        outputTokens += out;
        if (price != null) {
            costUsd += price.cost(in, out);
            costKnown = true;
        }
    }

    private void checkBudgets() {
        StopReason reason = null;
        String message = null;
        synchronized (this) {
            if (limits.maxInputTokens() != null && inputTokens >= limits.maxInputTokens()) {
                reason = StopReason.MAX_INPUT_TOKENS;
                message = "the run used %d input tokens, its budget is %d (max_input_tokens)"
                        .formatted(inputTokens, limits.maxInputTokens());
            } else if (limits.maxOutputTokens() != null && outputTokens >= limits.maxOutputTokens()) {
                reason = StopReason.MAX_OUTPUT_TOKENS;
                message = "the run used %d output tokens, its budget is %d (max_output_tokens)"
                        .formatted(outputTokens, limits.maxOutputTokens());
            } else if (limits.maxCostUsd() != null && costUsd >= limits.maxCostUsd()) {
                reason = StopReason.MAX_COST_USD;
                message = "the run cost $%.4f, its budget is $%.4f (max_cost_usd)"
                        .formatted(costUsd, limits.maxCostUsd());
            }
        }
        if (reason != null) {
            stop(reason, message);
        }
    }

    /** A request's estimate, held against the budgets while it is in flight. */
    record Reservation(String model, long in, long out, double cost) {}

    /**
     * Holds a request's estimate against the budgets before it is sent, or refuses it with LIMIT_EXCEEDED
     * once what is spent plus what the requests in flight hold reaches a budget; {@code wait}: an RLM's
     * turn waits for those in flight to be charged instead (they may leave room), until the run stops.
     */
    Reservation reserve(String model, long in, long out, boolean wait) throws LlmException, InterruptedException {
        String priced = model != null ? model : answeredBy();
        ModelPrice price = config.price(priced);
        Reservation r = new Reservation(priced, in, out, price == null ? 0 : price.cost(in, out));
        while (true) {
            if (wait) {
                stopped(); // a passed deadline stops the run here, outside the lock held below: stopping cancels
            }
            synchronized (this) {
                LlmException full = full();
                if (full == null) {
                    reservedIn += r.in();
                    reservedOut += r.out();
                    reservedCost += r.cost();
                    return r;
                }
                if (!wait || stop != null || reservedIn + reservedOut == 0) {
                    throw full;
                }
                wait(50);
            }
        }
    }

    private synchronized String answeredBy() {
        return answeredBy;
    }

    /** The refusal of a request when spent plus reserved has reached a budget, or null. */
    private synchronized LlmException full() {
        if (limits.maxInputTokens() != null && inputTokens + reservedIn >= limits.maxInputTokens()) {
            return refusal(
                    "max_input_tokens",
                    "used %d input tokens".formatted(inputTokens),
                    limits.maxInputTokens(),
                    reservedIn);
        }
        if (limits.maxOutputTokens() != null && outputTokens + reservedOut >= limits.maxOutputTokens()) {
            return refusal(
                    "max_output_tokens",
                    "used %d output tokens".formatted(outputTokens),
                    limits.maxOutputTokens(),
                    reservedOut);
        }
        if (limits.maxCostUsd() != null && costUsd + reservedCost >= limits.maxCostUsd()) {
            return refusal(
                    "max_cost_usd",
                    "cost $%.4f".formatted(costUsd),
                    "$%.4f".formatted(limits.maxCostUsd()),
                    "$%.4f".formatted(reservedCost));
        }
        return null;
    }

    private static LlmException refusal(String budget, String spent, Object limit, Object held) {
        return new LlmException(
                "LIMIT_EXCEEDED",
                budget,
                "the run %s of its %s (%s), and the requests in flight hold %s more: nothing more is sent until they are counted"
                        .formatted(spent, limit, budget, held));
    }

    /**
     * Charges a request that was sent: {@code in} and {@code out} as the provider counted them (or as
     * estimated, for one that never answered), its estimate released.
     */
    void settle(Reservation r, String model, long in, long out) {
        synchronized (this) { // one step: between a release and its charge the budget would look free
            release(r);
            add(model != null ? model : r.model(), in, out);
        }
        checkBudgets();
    }

    /** Releases the estimate of a request that was not sent after all. */
    synchronized void release(Reservation r) {
        reservedIn -= r.in();
        reservedOut -= r.out();
        reservedCost -= r.cost();
        notifyAll();
    }

    /** Admits one more child RLM, or stops the run at the children limit and returns false. */
    boolean admitChild(int depth) {
        synchronized (this) {
            if (stop == null && (limits.maxChildren() == null || children < limits.maxChildren())) {
                children++;
                childrenRunning++;
                depthReached = Math.max(depthReached, depth);
                return true;
            }
        }
        if (limits.maxChildren() != null) {
            stop(
                    StopReason.MAX_CHILDREN,
                    "the run started its %d child RLMs (max_children)".formatted(limits.maxChildren()));
        }
        return false;
    }

    synchronized void childEnded() {
        childrenRunning--;
    }

    synchronized void llmCall(int depth) {
        llmCalls++;
        depthReached = Math.max(depthReached, depth);
    }

    synchronized void cacheHit() {
        cacheHits++;
    }

    /** Counts a model turn of an RLM at {@code depth} and tells the progress listener. */
    void turn(int iteration, int depth) {
        synchronized (this) {
            iterations++;
        }
        progress.report(figures(), iteration, depth);
    }

    void changed(int iteration, int depth) {
        progress.report(figures(), iteration, depth);
    }

    synchronized RunFigures figures() {
        return new RunFigures(
                iterations,
                children,
                childrenRunning,
                depthReached,
                inputTokens,
                outputTokens,
                costKnown ? Math.round(costUsd * 1e6) / 1e6 : null,
                cacheHits,
                llmCalls,
                elapsedNanos() / 1_000_000);
    }

    private long elapsedNanos() {
        return System.nanoTime() - startedNanos;
    }
}

package dev.rlmmcp.kernel.channel;

import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.kernel.process.KernelProcess;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One call's time limit: interrupt at the timeout (and once more half-way through the grace), kill at
 * timeout + grace. A cancellation of the request the call serves interrupts at once and half a grace
 * later: the second interrupt catches code that the first reached before the harness made it
 * interruptible. Time the code spends waiting for child RLMs ({@link #hold}) does not count.
 */
final class Watchdog implements AutoCloseable {

    private static final long HOLD_CHECK_MS = 100;

    private final ScheduledExecutorService timer;
    private final KernelProcess process;
    private final Duration timeout;
    private final long graceMs;
    private final boolean interrupting;
    private final long started = System.nanoTime();
    private final List<ScheduledFuture<?>> timers = new CopyOnWriteArrayList<>();
    private final CallContext.Registration cancellation;
    private boolean armed;
    private volatile boolean fired;
    private volatile boolean closed;
    /** Child RLMs the code waits for now: their time does not count against the call's limit. */
    private int holds;

    private long heldSince;
    private long heldNanos;
    private volatile ScheduledFuture<?> check;

    /** With {@code interrupting} false, only a kill at the end of the time limit and grace. */
    Watchdog(
            ScheduledExecutorService timer,
            KernelProcess process,
            Duration timeout,
            Duration grace,
            boolean interrupting,
            CallContext context) {
        this.timer = timer;
        this.process = process;
        this.timeout = timeout;
        this.graceMs = grace.toMillis();
        this.interrupting = interrupting;
        cancellation = interrupting ? context.onCancel(this::cancelled) : () -> {};
    }

    /**
     * Sets the timers, counted from the call's start, once its wait is about to block: a reply that
     * comes while the wait still polls never touches the timer thread.
     */
    void arm() {
        if (armed || timeout == null) {
            return;
        }
        armed = true;
        check = timer.schedule(this::check, left(), TimeUnit.MILLISECONDS);
    }

    /** At the limit, counted without the time held: interrupt, again at half the grace, kill at its end. */
    private void check() {
        if (closed) {
            return;
        }
        long left = held() ? HOLD_CHECK_MS : left();
        if (left > 0) {
            check = timer.schedule(this::check, left, TimeUnit.MILLISECONDS);
            return;
        }
        if (interrupting) {
            interrupt();
            timers.add(timer.schedule(this::interrupt, graceMs / 2, TimeUnit.MILLISECONDS));
        }
        timers.add(timer.schedule(process::kill, graceMs, TimeUnit.MILLISECONDS));
    }

    /**
     * While the returned hold is open (the code waits for child RLMs, which have limits of their
     * own), the call's time limit stands still.
     */
    synchronized CallContext.Registration hold() {
        if (holds++ == 0) {
            heldSince = System.nanoTime();
        }
        return () -> {
            synchronized (Watchdog.this) {
                if (--holds == 0) {
                    heldNanos += System.nanoTime() - heldSince;
                }
            }
        };
    }

    private synchronized boolean held() {
        return holds > 0;
    }

    private synchronized long heldNow() {
        return heldNanos + (holds > 0 ? System.nanoTime() - heldSince : 0);
    }

    /** Milliseconds left of the limit, not counting the time held. */
    private long left() {
        return timeout.toMillis() - (System.nanoTime() - started - heldNow()) / 1_000_000;
    }

    /** When the call stops waiting whatever happens, moved on by the time held. */
    long hardDeadline() {
        return timeout == null
                ? -1
                : started
                        + heldNow()
                        + timeout.plus(Duration.ofMillis(graceMs))
                                .plus(Kernel.KILL_GRACE)
                                .toNanos();
    }

    private void cancelled() {
        interrupt();
        timers.add(timer.schedule(this::interrupt, graceMs / 2, TimeUnit.MILLISECONDS));
    }

    private void interrupt() {
        fired = true;
        process.interrupt();
    }

    /** Whether the call's code was interrupted (its time ran out, or its client cancelled). */
    boolean fired() {
        return fired;
    }

    @Override
    public void close() {
        closed = true;
        cancellation.close();
        ScheduledFuture<?> pending = check;
        if (pending != null) {
            pending.cancel(false);
        }
        timers.forEach(t -> t.cancel(false));
    }
}

package dev.rlmmcp.tools;

import dev.rlmmcp.base.Bytes;
import dev.rlmmcp.base.CallContext;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Progress notifications ("running 12 s") at a steady pace while a tool call runs, when the client
 * asked for them with a progressToken: clients drop calls they hear nothing from for too long. Work
 * that moves bytes reports them to the call's {@link CallContext}, and the notifications say so; other
 * work (an RLM run, which may follow a load) reports a status line, which they show from then on.
 */
final class ProgressTicker {

    static final Duration PERIOD = Duration.ofSeconds(2);
    private static final Logger log = LoggerFactory.getLogger(ProgressTicker.class);
    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("mcp-progress").daemon().factory());

    private final Object token;
    private final Consumer<McpSchema.ProgressNotification> sink;
    private final long started = System.nanoTime();
    private final ReentrantLock sending = new ReentrantLock();
    private final ScheduledFuture<?> ticks;
    private final Supplier<CallContext.Progress> progress;
    private final Supplier<String> status;
    private double last = -1;
    private boolean closed;

    private ProgressTicker(
            Object token,
            Consumer<McpSchema.ProgressNotification> sink,
            Duration period,
            Supplier<CallContext.Progress> progress,
            Supplier<String> status) {
        this.token = token;
        this.sink = sink;
        this.progress = progress;
        this.status = status;
        long ms = period.toMillis();
        ticks = TIMER.scheduleAtFixedRate(() -> Thread.ofVirtual().start(this::tick), ms, ms, TimeUnit.MILLISECONDS);
    }

    /** Runs {@code call}, with progress notifications to the client while it runs if the request asked for them. */
    static <T> T whileRunning(
            McpSyncServerExchange exchange, McpSchema.CallToolRequest request, CallContext context, Supplier<T> call) {
        return whileRunning(request.progressToken(), exchange::progressNotification, PERIOD, context, call);
    }

    static <T> T whileRunning(
            Object token,
            Consumer<McpSchema.ProgressNotification> sink,
            Duration period,
            CallContext context,
            Supplier<T> call) {
        if (token == null) {
            return call.get();
        }
        ProgressTicker ticker = new ProgressTicker(token, sink, period, context::progress, context::status);
        try {
            return call.get();
        } finally {
            ticker.stop();
        }
    }

    /** Sent from a virtual thread of its own, so that a client slow to read holds up no other call's ticks. */
    private void tick() {
        sending.lock();
        try {
            if (closed) {
                return;
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            sink.accept(notification(seconds, progress.get()));
        } catch (RuntimeException e) {
            log.debug("progress notification not sent: {}", e.toString());
        } finally {
            sending.unlock();
        }
    }

    /**
     * Seconds running (with the call's status line once it reports one), or else bytes moved (of the
     * total when known) once the call reports a transfer; the
     * progress value always rises, as MCP requires, even when a transfer stalls.
     */
    private McpSchema.ProgressNotification notification(double seconds, CallContext.Progress transfer) {
        String line = status.get();
        if (line != null || transfer.what() == null) {
            last = Math.max(seconds, last + 0.001);
            return McpSchema.ProgressNotification.builder(token, last)
                    .message(
                            line == null
                                    ? "running %d s".formatted(Math.round(seconds))
                                    : "%s, %d s".formatted(line, Math.round(seconds)))
                    .build();
        }
        last = Math.max(transfer.done(), last + 0.001);
        String of = transfer.total() >= 0 ? " of " + Bytes.human(transfer.total()) : "";
        return McpSchema.ProgressNotification.builder(token, last)
                .total(transfer.total() >= 0 ? (double) transfer.total() : null)
                .message("%s: %s%s, %d s"
                        .formatted(transfer.what(), Bytes.human(transfer.done()), of, Math.round(seconds)))
                .build();
    }

    /** Returns once no tick is being sent, so that none follows the call's answer. */
    private void stop() {
        ticks.cancel(false);
        sending.lock();
        try {
            closed = true;
        } finally {
            sending.unlock();
        }
    }
}

package dev.rlmmcp.cluster;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's lease in the cluster database, renewed by a heartbeat every lease/4. The database's
 * clock decides when the lease expires ({@code now() + lease} at the renewal), and no renewal can end
 * before it was sent; so if none has succeeded within lease − lease/4 of when the last successful one
 * was SENT, this node may be about to lose its sessions: it fences itself (every kernel stopped,
 * every epoch forgotten, nothing written) before any other node can take them over, and serves
 * nothing until a renewal succeeds again.
 */
public final class NodeLease implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(NodeLease.class);

    private static final long FIRST_RETRY_MS = 200;

    private final Consumer<Duration> renewal;
    private final Runnable fence;
    private final Duration lease;
    private final LongSupplier nanos;
    private final ScheduledExecutorService beats = Executors.newScheduledThreadPool(
            2, Thread.ofPlatform().daemon().name("node-lease-", 0).factory());
    private final Object lock = new Object();
    /** When the last renewal that succeeded was sent, in {@link #nanos}. */
    private long renewedSentAt;

    private boolean fenced;
    private volatile boolean live;
    private volatile boolean draining;
    private boolean failing;

    /**
     * {@code renewal} renews the lease (throwing if it could not); {@code fence} stops this node's
     * sessions at once; {@code nanos} is the clock (System::nanoTime but in tests).
     */
    public NodeLease(Consumer<Duration> renewal, Runnable fence, Duration lease, LongSupplier nanos) {
        this.renewal = renewal;
        this.fence = fence;
        this.lease = lease;
        this.nanos = nanos;
    }

    /**
     * The first renewal, then the heartbeat. The first renewal is tried again for up to the lease (a busy
     * machine or a database that is restarting may miss one connect timeout); a node that cannot reach the
     * database within that does not start, with one line saying so.
     */
    public void start() {
        long sent = firstRenewal();
        synchronized (lock) {
            renewedSentAt = sent;
            live = true;
        }
        long every = Math.max(1, lease.toMillis() / 4);
        beats.scheduleAtFixedRate(this::renew, every, every, TimeUnit.MILLISECONDS);
        long check = Math.max(1, Math.min(50, lease.toMillis() / 16));
        beats.scheduleAtFixedRate(this::check, check, check, TimeUnit.MILLISECONDS);
    }

    /** Renews until it succeeds, for up to the lease (by this machine's clock); when it was sent, in {@link #nanos}. */
    private long firstRenewal() {
        long deadline = System.nanoTime() + lease.toNanos();
        while (true) {
            long sent = nanos.getAsLong();
            try {
                renewal.accept(lease);
                return sent;
            } catch (RuntimeException e) {
                if (System.nanoTime() - deadline >= 0) {
                    throw new IllegalStateException(
                            "cannot join the cluster: the cluster database did not take this node's lease within "
                                    + lease.toMillis() + " ms (--cluster-lease-ms): " + e.getMessage(),
                            e);
                }
                log.warn("the node's first lease renewal failed, trying again: {}", e.getMessage());
                try {
                    Thread.sleep(FIRST_RETRY_MS);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /** One heartbeat: renews, and on success counts the lease from when it was sent (and ends a fence). */
    void renew() {
        long sent = nanos.getAsLong();
        try {
            renewal.accept(lease);
        } catch (RuntimeException e) {
            synchronized (lock) {
                if (!failing) {
                    log.warn("the node's lease could not be renewed: {}", e.getMessage());
                }
                failing = true;
            }
            return;
        }
        synchronized (lock) {
            if (sent - renewedSentAt > 0) {
                renewedSentAt = sent;
            }
            failing = false;
            if (fenced && !expired()) {
                fenced = false;
                live = true;
                log.info("the node's lease is renewed again: serving (holding no session until one is called)");
            }
        }
    }

    /** Fences this node if no renewal succeeded within lease − lease/4 of when it was sent. */
    void check() {
        synchronized (lock) {
            if (fenced || !expired()) {
                return;
            }
            fenced = true;
            live = false;
        }
        log.warn(
                "no renewal of the node's lease succeeded within {} ms of when it was sent: fencing this node",
                safeMillis());
        try {
            fence.run();
        } catch (RuntimeException e) {
            log.warn("fencing: {}", e.toString());
        }
    }

    private boolean expired() {
        return nanos.getAsLong() - renewedSentAt >= TimeUnit.MILLISECONDS.toNanos(safeMillis());
    }

    /** How long after it was sent a renewal keeps this node serving: lease − margin, the margin lease/4. */
    long safeMillis() {
        return lease.toMillis() - lease.toMillis() / 4;
    }

    /** Whether this node holds its lease (not fenced): it may run the sessions it holds. */
    public boolean live() {
        return live;
    }

    /** Whether this node takes work: live, and not handing its sessions over. */
    public boolean serving() {
        return live && !draining;
    }

    /** The handover at SIGTERM began: no new work here. */
    public void drain() {
        draining = true;
    }

    public Duration lease() {
        return lease;
    }

    /** Stops the heartbeat (after the node left the cluster). */
    @Override
    public void close() {
        beats.shutdownNow();
    }
}

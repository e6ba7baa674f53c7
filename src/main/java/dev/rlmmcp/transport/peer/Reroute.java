package dev.rlmmcp.transport.peer;

import dev.rlmmcp.cluster.Router;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * Routing again after a session's owner did not answer: the database still names it until its lease runs out
 * (seconds), then another node takes the session over; waiting that long here turns a dead owner into a slower
 * answer instead of an error.
 */
public final class Reroute {

    /** Longer than the default lease (4 s) and its renewal margin, shorter than clients' patience. */
    public static final Duration PATIENCE = Duration.ofSeconds(10);

    private static final long POLL_MS = 200;

    private Reroute() {}

    /** The first route that no longer names {@code gone}, or {@code gone} still after {@code patience}. */
    public static Router.Route after(Supplier<Router.Route> route, Router.Remote gone, Duration patience)
            throws InterruptedIOException {
        long deadline = System.nanoTime() + patience.toNanos();
        while (true) {
            Router.Route now = route.get();
            if (!now.equals(gone) || System.nanoTime() >= deadline) {
                return now;
            }
            try {
                Thread.sleep(POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while waiting for node " + gone.nodeId() + "'s lease");
            }
        }
    }
}

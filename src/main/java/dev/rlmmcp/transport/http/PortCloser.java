package dev.rlmmcp.transport.http;

import java.io.IOException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.ServerConnector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes a cluster node's ports so that no request sent to it is reset. A connection the kernel completed
 * but Jetty had not yet accepted when a port closes is reset by the kernel, and one Jetty accepted but had
 * not yet answered when it stops is closed: either after nginx (which opens one connection per request and
 * sends the request at once) had sent a POST on it, so nginx answers its own 502 ("may have run") and may not
 * pass the call on. So, the node refusing every request with the JSON 503 ({@link ClosingHandler}) already:
 * the ports stay open until no connection has come for a while (bounded); then each port accepts whatever
 * is queued and closes in the same breath, without blocking in between; then every connection opened since
 * the node began closing is answered (each 503 closes its connection) before Jetty stops. What is left is a
 * connection whose handshake the kernel completes in the instant between the last accept and the close (a
 * few microseconds per port): only a node nginx no longer sends to is closed with no such window at all.
 */
final class PortCloser implements Connection.Listener {

    private static final Logger log = LoggerFactory.getLogger(PortCloser.class);

    /** How long the connections accepted last may take to be answered, at most. */
    private static final long ANSWER_MAX_MS = 2_000;

    /** How long the selector may take to stop accepting once told to. */
    private static final long ACCEPTING_STOPS_MS = 20;

    /** How long the selector may take to open a connection it accepted just before its port closed. */
    private static final long OPEN_GRACE_MS = 100;

    private final AtomicLong lastOpened = new AtomicLong(System.nanoTime());
    private final Set<Connection> recent = ConcurrentHashMap.newKeySet();
    private final Set<SocketChannel> handedOver = ConcurrentHashMap.newKeySet();
    private volatile boolean closing;

    @Override
    public void onOpened(Connection connection) {
        lastOpened.set(System.nanoTime());
        if (closing) {
            recent.add(connection);
        }
    }

    @Override
    public void onClosed(Connection connection) {
        recent.remove(connection);
    }

    /** Drains, closes the ports, then waits for the last connections' answers (see the class comment). */
    void close(Connector[] connectors, long quietMs, long maxMs) {
        closing = true;
        try {
            drain(quietMs, maxMs);
            for (Connector connector : connectors) {
                if (connector instanceof ServerConnector port) {
                    closePort(port);
                }
            }
            Thread.sleep(OPEN_GRACE_MS);
            long end = System.nanoTime() + ANSWER_MAX_MS * 1_000_000L;
            handedOver.removeIf(channel -> !channel.isOpen());
            while (!(recent.isEmpty() && handedOver.isEmpty()) && System.nanoTime() - end < 0) {
                Thread.sleep(5);
                handedOver.removeIf(channel -> !channel.isOpen());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits until no connection was opened for {@code quietMs} (counted from now at the earliest), at most {@code maxMs}. */
    void drain(long quietMs, long maxMs) throws InterruptedException {
        long start = System.nanoTime();
        lastOpened.accumulateAndGet(start, Math::max);
        long quiet = quietMs * 1_000_000L;
        long end = start + maxMs * 1_000_000L;
        for (long now = start; now - end < 0; now = System.nanoTime()) {
            long waited = now - lastOpened.get();
            if (waited >= quiet) {
                return;
            }
            Thread.sleep(Math.max(1, Math.min(quiet - waited, end - now) / 1_000_000L));
        }
        log.info("closing the ports after {} ms of draining although connections keep coming", maxMs);
    }

    /**
     * Stops the selector's accepting, takes every connection queued on the (non-blocking) listening channel,
     * and closes the channel right after the accept that found none.
     */
    private void closePort(ServerConnector connector) {
        connector.setAccepting(false); // the selector stops accepting soon after: give it that time
        try {
            Thread.sleep(ACCEPTING_STOPS_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (connector.getTransport() instanceof ServerSocketChannel channel) {
            try {
                for (SocketChannel accepted = channel.accept(); accepted != null; accepted = channel.accept()) {
                    accepted.configureBlocking(false);
                    handedOver.add(accepted);
                    connector.getSelectorManager().accept(accepted);
                }
            } catch (IOException e) {
                log.warn("accepting the last connections on {}: {}", connector.getName(), e.toString());
            } finally {
                try {
                    channel.close();
                } catch (IOException e) {
                    log.debug("closing {}: {}", connector.getName(), e.toString());
                }
            }
        }
        connector.close();
    }
}

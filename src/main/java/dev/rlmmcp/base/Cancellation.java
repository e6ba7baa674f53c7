package dev.rlmmcp.base;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Cancellation of client requests, which the MCP SDK does not implement. A transport marks the
 * request it serves on its thread ({@link #serve}) and reports a client's notifications/cancelled
 * ({@link #cancel}); work done for that request on that thread hears of it through {@link #onCancel}.
 */
public final class Cancellation {

    private static final Map<Key, Request> SERVED = new ConcurrentHashMap<>();
    private static final ThreadLocal<Request> CURRENT = new ThreadLocal<>();

    private Cancellation() {
    }

    /** Marks the request with this JSON-RPC id, from this connection, as served by this thread until closed. */
    public static Request serve(String connection, Object requestId) {
        Request request = new Request(new Key(connection, normalized(requestId)));
        SERVED.put(request.key, request);
        CURRENT.set(request);
        return request;
    }

    /** Cancels a request being served; false if there is none with this id (it may have ended already). */
    public static boolean cancel(String connection, Object requestId) {
        Request request = SERVED.get(new Key(connection, normalized(requestId)));
        if (request == null) {
            return false;
        }
        request.cancel();
        return true;
    }

    public static boolean isCancelled(String connection, Object requestId) {
        Request request = SERVED.get(new Key(connection, normalized(requestId)));
        return request != null && request.cancelled();
    }

    /**
     * Runs {@code action} if the request this thread serves is cancelled before the registration is
     * closed, at once if it already was. Closing waits for an action under way, so none runs after.
     * Without a request being served here (a test, a background task) nothing is registered.
     */
    public static Registration onCancel(Runnable action) {
        Request request = CURRENT.get();
        return request == null ? () -> { } : request.listen(action);
    }

    /** JSON ids 7 and 7.0 are the same request, whichever Java number type a parser made of them. */
    private static Object normalized(Object id) {
        return id instanceof Number n && n.doubleValue() == n.longValue() ? (Object) n.longValue() : id;
    }

    private record Key(String connection, Object requestId) {
    }

    public interface Registration extends AutoCloseable {
        @Override
        void close();
    }

    /** One request being served; closing it ends its service on this thread. */
    public static final class Request implements AutoCloseable {

        private final Key key;
        private Runnable action;
        private boolean cancelled;

        private Request(Key key) {
            this.key = key;
        }

        public synchronized boolean cancelled() {
            return cancelled;
        }

        private synchronized void cancel() {
            if (!cancelled) {
                cancelled = true;
                if (action != null) {
                    action.run();
                }
            }
        }

        private synchronized Registration listen(Runnable onCancel) {
            if (cancelled) {
                onCancel.run();
            }
            action = onCancel;
            return () -> {
                synchronized (this) {
                    action = null;
                }
            };
        }

        @Override
        public void close() {
            SERVED.remove(key, this);
            if (CURRENT.get() == this) {
                CURRENT.remove();
            }
        }
    }
}

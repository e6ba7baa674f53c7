package dev.rlmmcp.base;

/**
 * One client request being served, handed explicitly from the transport that received it through the
 * tools and the core down to the kernel: whether the client has cancelled it, and how far its work
 * has come (for progress notifications). {@link #NONE} is for work no client waits on.
 */
public final class CallContext {

    /** Work no client waits on (tests, background tasks): never cancelled; progress is dropped. */
    public static final CallContext NONE = new CallContext(false);

    private final boolean live;
    private Runnable action;
    private boolean cancelled;
    private volatile Progress progress = new Progress(null, 0, -1);
    private volatile String status;
    private volatile boolean notServing;
    private volatile String offeredSessionId;

    private CallContext(boolean live) {
        this.live = live;
    }

    /** A context for a request a client is waiting on. */
    public static CallContext create() {
        return new CallContext(true);
    }

    public synchronized boolean cancelled() {
        return cancelled;
    }

    /** The client cancelled the request: the action registered now (if any) runs once. */
    public synchronized void cancel() {
        if (live && !cancelled) {
            cancelled = true;
            if (action != null) {
                action.run();
            }
        }
    }

    /**
     * Runs {@code action} if the request is cancelled before the registration is closed, at once if
     * it already was. Closing waits for an action under way, so none runs after. One at a time.
     */
    public synchronized Registration onCancel(Runnable onCancel) {
        if (!live) {
            return () -> {};
        }
        if (cancelled) {
            onCancel.run();
        }
        action = onCancel;
        return () -> {
            synchronized (this) {
                if (action == onCancel) {
                    action = null;
                }
            }
        };
    }

    /** Reports {@code done} bytes of {@code total} (or -1 if unknown) moved by {@code what}. */
    public void transferred(String what, long done, long total) {
        if (live) {
            progress = new Progress(what, done, total);
        }
    }

    /**
     * Says where work that is no transfer has come, in a line for the client ("iteration 3, depth 1, ..."),
     * shown by progress notifications while no transfer reports.
     */
    public void status(String line) {
        if (live) {
            status = line;
        }
    }

    /**
     * The call was refused before anything of it ran, because this node does not run its session now
     * (cluster mode): an HTTP transport answers it as the node's "not serving" 503, which a balancer or
     * the forwarding node sends on to the node that does.
     */
    public void markNotServing() {
        if (live) {
            notServing = true;
        }
    }

    /** Whether {@link #markNotServing} was called. */
    public boolean notServing() {
        return notServing;
    }

    /**
     * An id for a session this call creates, offered by the balancer that hashed the request on it (a
     * cluster behind the shipped nginx): named so, the session's later requests hash to the node that
     * created it and owns it. Null: none offered.
     */
    public String offeredSessionId() {
        return offeredSessionId;
    }

    public void offerSessionId(String id) {
        if (live) {
            offeredSessionId = id;
        }
    }

    /** The latest {@link #status(String)} line, or null. */
    public String status() {
        return status;
    }

    /** The latest report; {@code what} is null until something reports. */
    public Progress progress() {
        return progress;
    }

    public record Progress(String what, long done, long total) {}

    public interface Registration extends AutoCloseable {
        @Override
        void close();
    }
}

package dev.rlmmcp.base;

/**
 * How far the work of the request this thread serves has come, for progress notifications: work
 * that moves bytes reports them with {@link #transferred}; whoever sends the notifications reads
 * the {@link Status} it got from {@link #track} on the thread that does the work.
 */
public final class Progress {

    private static final ThreadLocal<Status> CURRENT = new ThreadLocal<>();

    private Progress() {
    }

    /** Starts tracking the work done on this thread until the status is closed. */
    public static Status track() {
        Status status = new Status();
        CURRENT.set(status);
        return status;
    }

    /** Reports {@code done} bytes of {@code total} (or -1 if unknown) moved by {@code what}; a no-op when nobody tracks. */
    public static void transferred(String what, long done, long total) {
        Status status = CURRENT.get();
        if (status != null) {
            status.set(what, done, total);
        }
    }

    /** The latest report; {@code what} is null until something reports. */
    public static final class Status implements AutoCloseable {

        private volatile Snapshot last = new Snapshot(null, 0, -1);

        private void set(String what, long done, long total) {
            last = new Snapshot(what, done, total);
        }

        public Snapshot snapshot() {
            return last;
        }

        @Override
        public void close() {
            if (CURRENT.get() == this) {
                CURRENT.remove();
            }
        }
    }

    public record Snapshot(String what, long done, long total) {
    }
}

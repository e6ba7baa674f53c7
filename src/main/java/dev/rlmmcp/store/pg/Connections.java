package dev.rlmmcp.store.pg;

import dev.rlmmcp.store.StoreException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * A small pool of connections to the cluster database. Every connection has short timeouts (to
 * connect, per statement on the server, per socket read on the client), so that a node cut off from
 * the database gets an error within about two seconds instead of hanging a caller; a connection that
 * failed is closed, not reused, and the next call opens a fresh one.
 */
final class Connections implements AutoCloseable {

    /** One unit of work on a connection. */
    @FunctionalInterface
    interface Work<T> {
        T on(Connection c) throws SQLException;
    }

    static final int STATEMENT_TIMEOUT_MS = 1500;

    private final PgUrl url;
    private final Properties properties;
    /** A connection back less than this long ago is known to work; an older one is checked before it is lent. */
    private static final long TRUSTED_NANOS = 100_000_000L;

    private final ConcurrentLinkedDeque<Idle> idle = new ConcurrentLinkedDeque<>();
    private final Semaphore permits;
    private volatile boolean closed;

    /** At most {@code max} connections to {@code url}. */
    Connections(PgUrl url, int max) {
        this.url = url;
        this.permits = new Semaphore(max);
        this.properties = url.properties();
        properties.setProperty("connectTimeout", "2");
        properties.setProperty("loginTimeout", "2");
        properties.setProperty("socketTimeout", "2");
        properties.setProperty("cancelSignalTimeout", "1");
        properties.setProperty("tcpKeepAlive", "true");
        properties.setProperty("ApplicationName", "rlm-mcp");
    }

    /** Runs {@code work} on a pooled connection in auto-commit mode; {@code what} names it in errors. */
    <T> T call(String what, Work<T> work) {
        Connection c = take(what);
        boolean healthy = false;
        try {
            T result = work.on(c);
            healthy = true;
            return result;
        } catch (SQLException e) {
            healthy = !broken(e);
            throw new StoreException("cannot " + what + " in the cluster database: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            healthy = true; // refused by the work itself (e.g. fenced): the connection is fine
            throw e;
        } finally {
            give(c, healthy);
        }
    }

    /** Runs {@code work} in one transaction: committed if it returns, rolled back if it throws. */
    <T> T transaction(String what, Work<T> work) {
        return call(what, c -> {
            c.setAutoCommit(false);
            try {
                T result = work.on(c);
                c.commit();
                return result;
            } catch (SQLException | RuntimeException e) {
                rollback(c);
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        });
    }

    private Connection take(String what) {
        if (closed) {
            throw new StoreException("cannot " + what + ": the cluster database is closed", null);
        }
        try {
            if (!permits.tryAcquire(2, TimeUnit.SECONDS)) {
                throw new StoreException("cannot " + what + ": every connection to the cluster database is busy", null);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreException("cannot " + what + ": interrupted", e);
        }
        // a pooled connection may have been ended by the server meanwhile (a restart of PostgreSQL ends every
        // session with "terminating connection due to administrator command"): checked, else replaced
        for (Idle pooled = idle.pollFirst(); pooled != null; pooled = idle.pollFirst()) {
            if (System.nanoTime() - pooled.since() < TRUSTED_NANOS || valid(pooled.connection())) {
                return pooled.connection();
            }
            close(pooled.connection());
        }
        Connection c = null;
        try {
            c = DriverManager.getConnection(url.jdbc(), properties);
            try (Statement s = c.createStatement()) {
                s.execute("SET statement_timeout = " + STATEMENT_TIMEOUT_MS);
                s.execute("SET lock_timeout = " + STATEMENT_TIMEOUT_MS);
                s.execute("SET idle_in_transaction_session_timeout = 10000");
            }
            return c;
        } catch (SQLException e) {
            permits.release();
            close(c);
            throw new StoreException("cannot connect to the cluster database " + url + ": " + e.getMessage(), e);
        }
    }

    private void give(Connection c, boolean healthy) {
        if (healthy && !closed) {
            idle.offerFirst(new Idle(c, System.nanoTime()));
        } else {
            close(c);
        }
        permits.release();
    }

    private record Idle(Connection connection, long since) {}

    private static boolean valid(Connection c) {
        try {
            return c.isValid(1);
        } catch (SQLException e) {
            return false;
        }
    }

    /** Whether the connection is lost (SQL state class 08, or a timeout on the socket). */
    private static boolean broken(SQLException e) {
        String state = e.getSQLState();
        return state == null || state.startsWith("08") || state.equals("57P01");
    }

    private static void rollback(Connection c) {
        try {
            c.rollback();
        } catch (SQLException ignored) {
            // the connection is broken: the failure being reported matters more
        }
    }

    private static void close(Connection c) {
        if (c != null) {
            try {
                c.close();
            } catch (SQLException ignored) {
                // already gone
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        for (Idle c = idle.pollFirst(); c != null; c = idle.pollFirst()) {
            close(c.connection());
        }
    }
}

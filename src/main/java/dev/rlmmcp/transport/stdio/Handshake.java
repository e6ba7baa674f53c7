package dev.rlmmcp.transport.stdio;

import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The stream's handshake of the 2025 revisions, as the SDK's session needs it. That session holds every
 * request but initialize until {@code notifications/initialized} arrives, so a client that sends its next
 * request first, or never sends the notification, would wait forever. Here a request after the initialize
 * answer counts as that notification, and a request before any initialize is refused with the fix: every
 * request gets an answer or an error, never silence.
 */
final class Handshake {

    private static final Logger log = LoggerFactory.getLogger(Handshake.class);

    /** How long a request sent right behind initialize waits for its answer (the SDK answers it at once). */
    private static final Duration ANSWERING = Duration.ofSeconds(10);

    /** What to do with a message before it goes to the SDK's session. */
    enum Admission {
        /** Pass it on. */
        PASS,
        /** Pass {@code notifications/initialized} on first, then the message. */
        INITIALIZED_FIRST,
        /** Answer it here with {@link #refusal}: the stream has not been initialized. */
        REFUSE,
        /** Answer a ping here: the SDK would hold it. */
        PONG
    }

    private volatile String initializeId;
    /** The line of the initialize request, once parsed: -1 before. */
    private volatile long initializeLine = -1;

    private final CountDownLatch initializeAnswered = new CountDownLatch(1);
    private final AtomicBoolean initialized = new AtomicBoolean();

    /**
     * Lines are numbered as read and parsed on threads of their own, so a request may get here before the
     * initialize read ahead of it: lines [0, parsedBelow) and those in {@link #parsedAhead} have been parsed.
     */
    private long parsedBelow;

    private final TreeSet<Long> parsedAhead = new TreeSet<>();

    /** Notes that line number {@code line} (counted from 0 in the order read) was parsed as {@code message}. */
    synchronized void parsed(long line, McpSchema.JSONRPCMessage message) {
        if (message instanceof McpSchema.JSONRPCRequest request
                && McpSchema.METHOD_INITIALIZE.equals(request.method())
                && initializeId == null) {
            initializeId = StartupAnswers.idKey(request.id());
            initializeLine = line;
        }
        parsedAhead.add(line);
        while (parsedAhead.remove(parsedBelow)) {
            parsedBelow++;
        }
        notifyAll();
    }

    /** Line {@code line}, parsed as {@code message}: what to do with it. */
    Admission admit(long line, McpSchema.JSONRPCMessage message) {
        if (initializeAnswered.getCount() > 0 && !isInitialize(message)) {
            awaitInitializeBefore(line);
        }
        if (message instanceof McpSchema.JSONRPCNotification n
                && McpSchema.METHOD_NOTIFICATION_INITIALIZED.equals(n.method())) {
            initialized.set(true);
            return Admission.PASS;
        }
        if (!(message instanceof McpSchema.JSONRPCRequest request) || initialized.get() || isInitialize(message)) {
            return Admission.PASS;
        }
        if (!awaitParsedBefore(line)) {
            return Admission.PASS; // interrupted: the server is stopping
        }
        long at = initializeLine;
        if (at < 0 || at > line) { // no initialize read before it: one read after it comes too late
            return McpSchema.METHOD_PING.equals(request.method()) ? Admission.PONG : Admission.REFUSE;
        }
        try {
            initializeAnswered.await(ANSWERING.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Admission.PASS;
        }
        if (!initialized.compareAndSet(false, true)) {
            return Admission.PASS;
        }
        log.info(
                "the client sent {} before notifications/initialized: the stream counts as initialized",
                request.method());
        return Admission.INITIALIZED_FIRST;
    }

    private static boolean isInitialize(McpSchema.JSONRPCMessage message) {
        return message instanceof McpSchema.JSONRPCRequest request
                && McpSchema.METHOD_INITIALIZE.equals(request.method());
    }

    /**
     * Waits until the session has answered an initialize read before line {@code line}, if there is one. The
     * client may have had its answer from the front ({@link StdioFront}) long before, and sent this message on
     * it: the session must have taken the client's capabilities (sampling) before it handles what follows.
     */
    private void awaitInitializeBefore(long line) {
        if (!awaitParsedBefore(line)) {
            return;
        }
        long at = initializeLine;
        if (at >= 0 && at < line) {
            try {
                initializeAnswered.await(ANSWERING.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private synchronized boolean awaitParsedBefore(long line) {
        try {
            while (parsedBelow < line) {
                wait();
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Notes a message the server sends: the answer to initialize lets the requests behind it through. */
    void sent(McpSchema.JSONRPCMessage message) {
        String id = initializeId;
        if (id != null
                && message instanceof McpSchema.JSONRPCResponse answer
                && answer.id() != null
                && id.equals(StartupAnswers.idKey(answer.id()))) {
            initializeAnswered.countDown();
        }
    }

    static String refusal(String method) {
        return "this stream has not been initialized, so " + method + " cannot be answered: send initialize first, "
                + "then notifications/initialized (or name protocol 2026-07-28 in each request's _meta)";
    }
}

package dev.rlmmcp.kernel.channel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The callbacks of one kernel call: each request the kernel sends ({@code {"cb": n, "kind", "request"}})
 * is handled on a virtual thread and answered on the pipe ({@code {"cb": n, "ok", "result" | "error"}}).
 * Once closed (the kernel said its exec is over, or the call ended) no answer is written and handlers
 * still running are interrupted.
 */
final class CallbackScope implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(CallbackScope.class);
    private static final InheritableThreadLocal<Integer> DEPTH = new InheritableThreadLocal<>();

    interface Writer {
        void write(ObjectNode frame) throws IOException;
    }

    /** Stops the call's clock while a request the callbacks say hold it is handled ({@link KernelCallbacks#holdsClock}). */
    interface Clock {
        dev.rlmmcp.base.CallContext.Registration hold();
    }

    private final KernelCallbacks callbacks;
    private final Writer writer;
    private final ObjectMapper json;
    private final int depth;
    private final Clock clock;
    private final Map<Long, Thread> running = new ConcurrentHashMap<>();
    /** A lock, not a monitor: answers are written under it, and a virtual thread blocked in that write must not pin its carrier. */
    private final ReentrantLock lock = new ReentrantLock();

    private boolean closed;

    CallbackScope(KernelCallbacks callbacks, Writer writer, ObjectMapper json) {
        this(callbacks, writer, json, () -> () -> {});
    }

    CallbackScope(KernelCallbacks callbacks, Writer writer, ObjectMapper json, Clock clock) {
        this.clock = clock;
        this.callbacks = callbacks;
        this.writer = writer;
        this.json = json;
        this.depth = depth() + 1;
    }

    /** How many callback handlers the current thread runs inside: 0 outside any. */
    static int depth() {
        Integer d = DEPTH.get();
        return d == null ? 0 : d;
    }

    void dispatch(ObjectNode header) {
        long cb = header.path("cb").asLong();
        String kind = header.path("kind").asText("");
        JsonNode request = header.path("request");
        Thread thread = Thread.ofVirtual()
                .name("kernel-callback-" + kind + "-" + cb)
                .unstarted(() -> {
                    DEPTH.set(depth);
                    try (dev.rlmmcp.base.CallContext.Registration held =
                            callbacks.holdsClock(kind) ? clock.hold() : () -> {}) {
                        answer(cb, handle(cb, kind, request));
                    } finally {
                        running.remove(cb);
                    }
                });
        lock.lock();
        try {
            if (closed) {
                return;
            }
            running.put(cb, thread);
        } finally {
            lock.unlock();
        }
        thread.start();
    }

    private ObjectNode handle(long cb, String kind, JsonNode request) {
        ObjectNode reply = json.createObjectNode().put("cb", cb);
        try {
            JsonNode result = callbacks.handle(kind, request);
            reply.put("ok", true).set("result", result);
        } catch (CallbackException e) {
            error(reply, e.code(), e.getMessage());
        } catch (InterruptedException e) {
            return null;
        } catch (RuntimeException e) {
            log.error("kernel callback {} failed", kind, e);
            error(reply, "INTERNAL_ERROR", "the host failed to answer this " + kind + " request: " + e);
        }
        return reply;
    }

    private static void error(ObjectNode reply, String code, String message) {
        reply.put("ok", false).putObject("error").put("code", code).put("message", message);
    }

    private void answer(long cb, ObjectNode reply) {
        lock.lock();
        try {
            if (closed || reply == null) {
                return;
            }
            writer.write(reply);
        } catch (IOException e) {
            log.debug("kernel gone before callback {} was answered: {}", cb, e.toString());
        } finally {
            lock.unlock();
        }
    }

    /** Ends the scope: no answer is written after this returns, and handlers still running are interrupted. */
    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
        } finally {
            lock.unlock();
        }
        running.values().forEach(Thread::interrupt);
    }
}

package dev.rlmmcp.kernel.channel;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.base.Text;
import dev.rlmmcp.kernel.process.KernelProcess;
import dev.rlmmcp.kernel.protocol.KernelRequest;
import dev.rlmmcp.kernel.protocol.Refusal;
import dev.rlmmcp.kernel.protocol.Restored;
import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The calls on one kernel: each request written with an id of its own, and the frames that come back
 * matched to it until its reply: callback requests go to the call's {@link CallbackScope}, stray
 * frames are logged and dropped, and a reply not of the request's reply type breaks the protocol.
 * Each call runs under a {@link Watchdog}; the frames come from the kernel's {@link FramePump}.
 */
final class Calls {

    private static final Logger log = LoggerFactory.getLogger(Calls.class);

    private final KernelProcess process;
    private final FramePump pump;
    private final FrameCodec codec;
    private final ObjectMapper json;
    private final ScheduledExecutorService timer;
    private final DataOutputStream out;
    /** Held while a frame is written: a lock, not a monitor, so that a virtual thread blocked in the write never pins its carrier. */
    private final ReentrantLock writing = new ReentrantLock();

    private final long outputFrameBytes;
    /** Why the kernel ended, once a call finds it has: the kernel's account. */
    private final Supplier<KernelDiedException> died;

    private long nextId;
    /** Why the kernel is killed if the request in flight goes unanswered (null: it runs code, whose kill is a timeout's). */
    private volatile String silence;

    /** The snapshot directory (as the kernel sees it) its last restore attached, and that restore's account. */
    private record Attachment(String dir, Restored restored) {}

    private volatile Attachment attachment;

    Calls(
            KernelProcess process,
            FramePump pump,
            FrameCodec codec,
            ObjectMapper json,
            ScheduledExecutorService timer,
            int outputCap,
            Supplier<KernelDiedException> died) {
        this.process = process;
        this.pump = pump;
        this.codec = codec;
        this.json = json;
        this.timer = timer;
        this.died = died;
        this.out = new DataOutputStream(new BufferedOutputStream(process.stdin(), 1 << 16));
        this.outputFrameBytes = Math.max(
                Kernel.EXEC_FRAME_BYTES,
                Kernel.CONTROL_FRAME_BYTES + 2L * Kernel.JSON_BYTES_PER_CHAR * Math.max(0, outputCap));
    }

    /** The largest frame a request may be answered with: what it can legitimately return, and no more. */
    long frameLimit(KernelRequest<?> request) {
        return switch (request) {
            case KernelRequest.Exec exec -> outputFrameBytes;
            case KernelRequest.Get get ->
                Math.min(
                        FrameCodec.MAX_FRAME,
                        Kernel.CONTROL_FRAME_BYTES + Kernel.JSON_BYTES_PER_CHAR * Math.max(0, get.maxChars()));
            default -> Kernel.CONTROL_FRAME_BYTES;
        };
    }

    /** Why the kernel is killed if the request in flight goes unanswered, or null. */
    String silence() {
        return silence;
    }

    /** The account of the restore that attached {@code dir}, if that is the directory snapshots go to; else null. */
    Restored attachedTo(String dir) {
        Attachment last = attachment;
        return last != null && last.dir().equals(dir) ? last.restored() : null;
    }

    /** See {@link Kernel#call(KernelRequest, String, Duration, Duration, KernelCallbacks, CallContext)}. */
    <R> KernelReply<R> call(
            KernelRequest<R> request,
            String text,
            Duration timeout,
            Duration grace,
            KernelCallbacks callbacks,
            CallContext context)
            throws KernelDiedException {
        long id = ++nextId;
        long started = System.nanoTime();
        begin(request, timeout, grace);
        try (Watchdog watchdog = new Watchdog(timer, process, timeout, grace, true, context);
                CallbackScope scope = new CallbackScope(callbacks, this::write, json, watchdog::hold)) {
            if (text != null) {
                watchdog.arm(); // a large payload can fill the pipe: a kernel that stops reading must not hold the
                // write
            }
            writing.lock();
            try {
                if (text == null) {
                    codec.write(out, new Frame(frame(request, id)));
                } else {
                    codec.writeText(out, frame(request, id), text);
                }
            } finally {
                writing.unlock();
            }
            return awaitReply(request, id, started, watchdog, scope);
        } catch (IOException e) {
            throw died.get();
        } finally {
            end();
        }
    }

    /** The frames up to the reply to call {@code id}: callbacks served meanwhile, stray frames dropped. */
    private <R> KernelReply<R> awaitReply(
            KernelRequest<R> request, long id, long started, Watchdog watchdog, CallbackScope scope)
            throws IOException, KernelDiedException {
        while (true) {
            ObjectNode answer = pump.next(watchdog::hardDeadline, watchdog::arm).header();
            boolean callback = answer.has("cb") || answer.has("cb_close");
            if (!callback && answer.path("id").asLong(-1) == id) {
                KernelReply<R> reply = reply(request, answer, interruptedAfter(watchdog, started));
                if (request instanceof KernelRequest.Restore restore && reply.body() instanceof Restored done) {
                    attachment = new Attachment(restore.dir(), done);
                }
                return reply;
            }
            watchdog.arm(); // only a call its first frame answers skips the timers, however fast other frames come
            if (answer.has("cb")) {
                scope.dispatch(answer);
            } else if (callback) {
                scope.close();
                write(json.createObjectNode().put("cb_closed", true));
            } else {
                log.debug("ignoring stray kernel frame {}", answer);
            }
        }
    }

    /** See {@link Kernel#callStreaming}. */
    <R> KernelReply<R> callStreaming(
            KernelRequest<R> request, InputStream source, Duration timeout, Duration grace, CallContext context)
            throws KernelDiedException, TransferAbortedException {
        long id = ++nextId;
        ObjectNode header = frame(request, id);
        long started = System.nanoTime();
        begin(request, timeout, grace);
        try {
            IOException failure = transfer(header, source, timeout, grace, context);
            Duration left = timeout == null
                    ? null
                    : Duration.ofNanos(Math.max(1_000_000, timeout.toNanos() - (System.nanoTime() - started)));
            // a stopped transfer leaves the kernel only discarding what it got: no interrupt, which could
            // otherwise land late, in the next call
            long deadline = hardDeadline(left, grace);
            try (Watchdog watchdog = new Watchdog(timer, process, left, grace, failure == null, context)) {
                while (true) {
                    Frame frame = pump.next(() -> deadline, watchdog::arm);
                    if (frame.header().path("id").asLong(-1) == id) {
                        if (failure != null) {
                            throw new TransferAbortedException(failure);
                        }
                        return reply(request, frame.header(), interruptedAfter(watchdog, started));
                    }
                    watchdog.arm(); // as in call: only a reply that is the first frame skips the timers
                    log.debug("ignoring stray kernel frame {}", frame.header());
                }
            }
        } catch (IOException e) {
            throw died.get();
        } finally {
            end();
        }
    }

    /**
     * Streams the request and its payload from {@code source}, which the time limit and the client's
     * cancellation close (cutting the stream short); returns why the transfer failed, or null.
     */
    private IOException transfer(
            ObjectNode header, InputStream source, Duration timeout, Duration grace, CallContext context)
            throws IOException {
        AtomicReference<String> stopped = new AtomicReference<>();
        Runnable timedOut = () -> stop(stopped, "ran past its time limit of " + timeout.toSeconds() + " s", source);
        List<ScheduledFuture<?>> timers = new ArrayList<>();
        if (timeout != null) {
            timers.add(timer.schedule(timedOut, timeout.toMillis(), TimeUnit.MILLISECONDS));
            // a kernel that stops reading its pipe would leave the writer blocked for good
            timers.add(timer.schedule(
                    process::kill, timeout.plus(grace).plusSeconds(5).toMillis(), TimeUnit.MILLISECONDS));
        }
        IOException failure;
        try (CallContext.Registration cancelled =
                context.onCancel(() -> stop(stopped, "was cancelled by the client", source))) {
            failure = codec.writeStream(
                    out,
                    header,
                    source,
                    () -> stopped.get() == null ? null : new InterruptedIOException("the transfer " + stopped.get()));
        } finally {
            timers.forEach(t -> t.cancel(false));
        }
        if (failure != null && stopped.get() != null && !(failure instanceof InterruptedIOException)) {
            failure = new InterruptedIOException("the transfer " + stopped.get());
        }
        return failure;
    }

    /** Stops a stream's transfer: closing its source ends the read the writer may be blocked in. */
    private static void stop(AtomicReference<String> stopped, String why, InputStream source) {
        if (stopped.compareAndSet(null, why)) {
            try {
                source.close();
            } catch (IOException | RuntimeException e) {
                log.debug("closing a stopped transfer's source: {}", e.toString());
            }
        }
    }

    private void begin(KernelRequest<?> request, Duration timeout, Duration grace) {
        pump.limit(frameLimit(request));
        silence = silence(request, timeout, grace);
        BusyPoll.callStarted();
    }

    private void end() {
        pump.reset();
        silence = null;
        BusyPoll.callEnded();
    }

    private static long interruptedAfter(Watchdog watchdog, long started) {
        return watchdog.fired() ? (System.nanoTime() - started) / 1_000_000 : -1;
    }

    /** Writes one frame (a callback's answer, the shutdown request) while no call or a call is under way. */
    void write(ObjectNode header) throws IOException {
        writing.lock();
        try {
            codec.write(out, new Frame(header));
        } finally {
            writing.unlock();
        }
    }

    /** The request as the harness reads it: {@code {"op", "id", fields…}}. */
    private ObjectNode frame(KernelRequest<?> request, long id) {
        ObjectNode header =
                json.createObjectNode().put("op", request.op()).put("id", id).put("poll_us", BusyPoll.micros());
        return header.setAll((ObjectNode) json.valueToTree(request));
    }

    /** The harness's answer to {@code request}, typed; an answer of the wrong shape breaks the protocol. */
    private <R> KernelReply<R> reply(KernelRequest<R> request, ObjectNode header, long interruptedAfterMs)
            throws KernelDiedException {
        JsonNode unsaved = header.get("variables_unsaved");
        List<String> changed = null;
        if (unsaved != null && unsaved.isArray()) {
            changed = new ArrayList<>(unsaved.size());
            for (JsonNode name : unsaved) {
                changed.add(name.asText());
            }
        }
        if (!header.path("ok").asBoolean(false)) {
            JsonNode argument = header.path("argument");
            return new KernelReply<>(
                    null,
                    new Refusal(
                            header.path("code").asText("KERNEL_ERROR"),
                            header.path("message").asText("the kernel refused the request"),
                            argument.isTextual() ? argument.asText() : null),
                    changed,
                    interruptedAfterMs);
        }
        try {
            return new KernelReply<>(json.treeToValue(header, request.replyType()), null, changed, interruptedAfterMs);
        } catch (JsonProcessingException | IllegalArgumentException e) {
            pump.violated("its answer to " + request.op() + " does not have the protocol's shape: " + e.getMessage());
            log.warn("kernel {} broke the protocol and is killed: {}", process.pid(), pump.violation());
            process.kill();
            throw died.get();
        }
    }

    /** When a call with this limit stops waiting whatever happens: {@link Kernel#KILL_GRACE} after the watchdog's kill. */
    private static long hardDeadline(Duration timeout, Duration grace) {
        return timeout == null
                ? -1
                : System.nanoTime()
                        + timeout.plus(grace).plus(Kernel.KILL_GRACE).toNanos();
    }

    /** What a kill for silence says: which request went unanswered, and for how long. */
    private static String silence(KernelRequest<?> request, Duration timeout, Duration grace) {
        if (request instanceof KernelRequest.Exec || timeout == null) {
            return null;
        }
        String what = switch (request) {
            case KernelRequest.Snapshot snapshot -> "request to write its snapshot";
            case KernelRequest.Restore restore -> "request to restore its snapshot";
            case KernelRequest.Vars vars -> "request for its variables";
            default -> "'" + request.op() + "' request";
        };
        return "the kernel did not answer the server's " + what + " within " + Text.seconds(timeout.plus(grace))
                + " s, so it was killed (code run in the kernel may have blocked signals or read its requests)";
    }
}

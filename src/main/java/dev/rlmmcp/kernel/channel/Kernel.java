package dev.rlmmcp.kernel.channel;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.base.Text;
import dev.rlmmcp.kernel.process.KernelLauncher;
import dev.rlmmcp.kernel.process.KernelProcess;
import dev.rlmmcp.kernel.process.KernelSpec;
import dev.rlmmcp.kernel.protocol.KernelRequest;
import dev.rlmmcp.kernel.protocol.Ready;
import dev.rlmmcp.kernel.protocol.Refusal;
import dev.rlmmcp.kernel.protocol.Restored;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The framed pipe to one persistent CPython kernel ({@link KernelProcess} is its process): typed
 * requests out, typed replies back. Not thread-safe: its session serialises calls (callback answers
 * written meanwhile share the pipe under a lock). A call that outlives its timeout, or that its
 * client cancels, is interrupted (SIGINT semantics, variables kept); one that ignores the interrupt
 * for the grace period is killed.
 *
 * <p>The kernel is not trusted. Its stdout is read only while a call waits on it: by the caller itself
 * when it is a platform thread (no hand-off between threads on the reply's path), and for a virtual
 * thread by a small platform thread of the kernel's own, which hands it the frames (a virtual thread
 * blocked in a native pipe read would hold its carrier). A platform thread polls the pipe for a
 * moment before it blocks, and arms the call's timers only then ({@link BusyPoll}). Each frame is
 * checked against the size the request in flight can legitimately return before anything is
 * allocated. A frame over its limit, not JSON, or a reply not of the request's reply type is a
 * protocol violation: the kernel is killed and the call fails with
 * {@link KernelDiedException.Cause#PROTOCOL_VIOLATION}. A kernel whose process is stopped (SIGSTOP)
 * is killed within about a second of a call waiting on it, whatever the call's time limit.
 *
 * <p>Every call ends by its time limit, the interrupt's grace and {@link #KILL_GRACE}, whatever the
 * kernel sends or does not send: code that blocks SIGINT, a thread of its own that reads the request
 * off the pipe before the harness does, stray frames. A kernel that does not answer a request other
 * than running code (a snapshot, the variables, a load) is killed with
 * {@link KernelDiedException.Cause#UNANSWERED}, which names the request.
 */
public final class Kernel implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Kernel.class);
    /** The most a reply to a control request (vars, memory, snapshot, restore, load...) may hold. */
    static final long CONTROL_FRAME_BYTES = 16L << 20;
    /**
     * The most a frame may hold while code runs: its reply (stdout and stderr, each clipped to the
     * output cap) and the callback requests it makes (a batch of llm_query prompts, an MCP call's
     * arguments), which the host checks again once read.
     */
    static final long EXEC_FRAME_BYTES = 64L << 20;
    /** Bytes of JSON one character can take: UTF-8, or a \\u escape for a control character. */
    static final int JSON_BYTES_PER_CHAR = 6;
    /**
     * How long after its kill a call still waits for the kernel's pipe to end (it ends at once when
     * the sandbox's processes die) before it gives up on the kernel.
     */
    public static final Duration KILL_GRACE = Duration.ofSeconds(2);
    /** How often a call that waits checks that the kernel's process is not stopped. */
    private static final long STALL_CHECK_MS = 1000;
    private static final Object END = new Object();

    private final KernelProcess process;
    private final DataOutputStream out;
    /** Held while a frame is written: a lock, not a monitor, so that a virtual thread blocked in the write never pins its carrier. */
    private final ReentrantLock writing = new ReentrantLock();
    private final DataInputStream in;
    private final FrameCodec codec;
    private final ObjectMapper json;
    private final ScheduledExecutorService timer;
    private final long outputFrameBytes;
    private final Thread reader;
    /**
     * Frames handed from the reader to a virtual thread waiting for them: the reader reads one frame
     * per frame asked for ({@link #wanted}) and waits until the call takes it, so nothing piles up here.
     */
    private final LinkedTransferQueue<Object> frames = new LinkedTransferQueue<>();
    /** Frames a virtual thread waits for: the reader reads only these. */
    private final Semaphore wanted = new Semaphore(0);
    /** Held by whoever reads the pipe: the reader thread, or a platform thread that waits on a call. */
    private final ReentrantLock reading = new ReentrantLock();
    private long nextId;
    /** The largest frame the request in flight may be answered with. */
    private volatile long frameLimit = CONTROL_FRAME_BYTES;
    private volatile String violation;
    private volatile boolean stalled;
    /** Why the kernel is killed if the request in flight goes unanswered (null: it runs code, whose kill is a timeout's). */
    private volatile String silence;
    /** Why the server gave up on this kernel from outside a call ({@link #abandon}), or null. */
    private volatile String abandoned;
    /** The pipe has ended, or the kernel broke the protocol on it: no frame will come. */
    private volatile boolean pipeEnded;
    private volatile boolean closed;
    /** The harness's ready frame: its pid, Python, protocol version and reserved names. */
    private final Ready ready;

    /** The snapshot directory (as the kernel sees it) its last restore attached, and that restore's account. */
    private record Attachment(String dir, Restored restored) {
    }

    private volatile Attachment attachment;

    private Kernel(KernelProcess process, ObjectMapper json, ScheduledExecutorService timer, String label,
            Duration startTimeout, int outputCap) throws KernelDiedException {
        this.process = process;
        this.json = json;
        this.timer = timer;
        this.codec = new FrameCodec(json);
        this.outputFrameBytes = Math.max(EXEC_FRAME_BYTES,
                CONTROL_FRAME_BYTES + 2L * JSON_BYTES_PER_CHAR * Math.max(0, outputCap));
        this.out = new DataOutputStream(new BufferedOutputStream(process.stdin(), 1 << 16));
        this.in = new DataInputStream(new BufferedInputStream(process.stdout(), 1 << 16));
        this.reader = Thread.ofPlatform().daemon().stackSize(1 << 20).name("kernel-frames-" + label)
                .start(this::readFrames);
        ScheduledFuture<?> deadline = timer.schedule(process::kill, startTimeout.toMillis(), TimeUnit.MILLISECONDS);
        try {
            this.ready = Ready.of(next(() -> -1, () -> { }).header());
            process.announced(ready.pid());
            if (!ready.compatible()) {
                violation = ready.mismatch();
                throw died();
            }
        } catch (IOException e) {
            throw died();
        } finally {
            deadline.cancel(false);
        }
    }

    /** What the harness said in its ready frame. */
    public Ready ready() {
        return ready;
    }

    /** Starts a kernel and waits until its harness says it is ready (with the default output cap). */
    public static Kernel start(KernelLauncher launcher, KernelSpec spec, ObjectMapper json,
            ScheduledExecutorService timer, String label, Duration startTimeout) throws IOException, KernelDiedException {
        return start(launcher, spec, json, timer, label, startTimeout, 20_000);
    }

    /** Starts a kernel and waits until its harness says it is ready; its exec replies are bounded by {@code outputCap}. */
    public static Kernel start(KernelLauncher launcher, KernelSpec spec, ObjectMapper json,
            ScheduledExecutorService timer, String label, Duration startTimeout, int outputCap)
            throws IOException, KernelDiedException {
        return new Kernel(KernelProcess.start(launcher, spec, label), json, timer, label, startTimeout, outputCap);
    }

    /** The largest frame a request may be answered with: what it can legitimately return, and no more. */
    long frameLimit(KernelRequest<?> request) {
        return switch (request) {
            case KernelRequest.Exec exec -> outputFrameBytes;
            case KernelRequest.Get get -> Math.min(FrameCodec.MAX_FRAME, CONTROL_FRAME_BYTES
                    + JSON_BYTES_PER_CHAR * Math.max(0, get.maxChars()));
            default -> CONTROL_FRAME_BYTES;
        };
    }

    /** The request as the harness reads it: {@code {"op", "id", fields…}}. */
    private ObjectNode frame(KernelRequest<?> request, long id) {
        ObjectNode header = json.createObjectNode().put("op", request.op()).put("id", id)
                .put("poll_us", BusyPoll.micros());
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
            return new KernelReply<>(null, new Refusal(header.path("code").asText("KERNEL_ERROR"),
                    header.path("message").asText("the kernel refused the request"),
                    argument.isTextual() ? argument.asText() : null), changed, interruptedAfterMs);
        }
        try {
            return new KernelReply<>(json.treeToValue(header, request.replyType()), null, changed, interruptedAfterMs);
        } catch (JsonProcessingException | IllegalArgumentException e) {
            violation = "its answer to " + request.op() + " does not have the protocol's shape: " + e.getMessage();
            log.warn("kernel {} broke the protocol and is killed: {}", process.pid(), violation);
            process.kill();
            throw died();
        }
    }

    /**
     * The reader thread: reads the frames virtual threads wait for ({@link #wanted}) until the pipe
     * ends or the kernel breaks the protocol, which kills it.
     */
    private void readFrames() {
        try {
            while (!pipeEnded) {
                if (!wanted.tryAcquire(1, TimeUnit.SECONDS)) {
                    if (closed) {
                        return;
                    }
                    continue;
                }
                Frame frame = readFrame();
                while (!frames.tryTransfer(frame, 1, TimeUnit.SECONDS)) {
                    if (closed) {
                        return;
                    }
                }
            }
        } catch (IOException e) {
            // told by readFrame
        } catch (InterruptedException e) {
            // closed
        } finally {
            frames.offer(END);
        }
    }

    /** Reads one frame off the pipe; a protocol violation kills the kernel, and either way the pipe has ended. */
    private Frame readFrame() throws IOException {
        reading.lock();
        try {
            if (pipeEnded) {
                throw new EOFException("kernel pipe closed");
            }
            return codec.read(in, () -> frameLimit);
        } catch (ProtocolViolation e) {
            pipeEnded = true;
            violation = e.getMessage();
            log.warn("kernel {} broke the protocol and is killed: {}", process.pid(), e.getMessage());
            process.kill();
            throw e;
        } catch (IOException e) {
            pipeEnded = true;
            log.debug("kernel {} pipe closed: {}", process.pid(), e.toString());
            throw e;
        } finally {
            reading.unlock();
        }
    }

    /**
     * The next frame, read by this (platform) thread itself: at once if it wholly arrives while the
     * wait polls ({@link BusyPoll}), else after {@code blocking} (the call's watchdog is armed) in a
     * read that blocks: the call's watchdog (or the start's deadline) and a stopped kernel (checked
     * every second) kill the kernel, which ends the pipe and so the read.
     */
    private Frame readHere(Runnable blocking) throws IOException {
        if (BusyPoll.poll(() -> FrameCodec.arrived(in))) {
            return readFrame();
        }
        blocking.run();
        ScheduledFuture<?> stallCheck = timer.scheduleWithFixedDelay(this::killIfStopped, STALL_CHECK_MS,
                STALL_CHECK_MS, TimeUnit.MILLISECONDS);
        try {
            return readFrame();
        } finally {
            stallCheck.cancel(false);
        }
    }

    /** A stopped kernel never answers: killed now rather than at the end of the call's limit. */
    private void killIfStopped() {
        if (!pipeEnded && process.stopped()) {
            log.warn("kernel {} is stopped (SIGSTOP?) while a call waits on it: killed", process.pid());
            stalled = true;
            process.kill();
        }
    }

    /**
     * The next frame, waiting until {@code deadline} (System.nanoTime; -1: no limit): read by this
     * thread if it is a platform thread, else by the reader thread for it; an interrupt of the caller
     * does not cut the wait short (it is kept for later). Every second of waiting, a kernel whose
     * process is stopped is killed. Throws when the pipe has ended, or at the deadline, after killing
     * the kernel.
     */
    private Frame next(java.util.function.LongSupplier deadlines, Runnable blocking) throws IOException {
        if (!Thread.currentThread().isVirtual()) {
            return readHere(blocking);
        }
        blocking.run();
        if (pipeEnded) {
            throw new EOFException("kernel pipe closed");
        }
        wanted.release();
        boolean interrupted = false;
        long checkStallAt = System.nanoTime() + STALL_CHECK_MS * 1_000_000;
        try {
            while (true) {
                long deadline = deadlines.getAsLong();
                long wait = deadline < 0 ? 250 : Math.min(250, (deadline - System.nanoTime()) / 1_000_000);
                if (deadline >= 0 && wait <= 0) {
                    process.kill();
                    throw new IOException("no reply within the call's time limit");
                }
                Object item;
                try {
                    item = frames.poll(wait, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                    continue;
                }
                if (item instanceof Frame frame) {
                    return frame;
                }
                if (item == null && System.nanoTime() - checkStallAt >= 0) {
                    checkStallAt = System.nanoTime() + STALL_CHECK_MS * 1_000_000;
                    killIfStopped();
                }
                if (item == END || (pipeEnded && frames.isEmpty())) {
                    frames.offer(END);
                    throw new EOFException("kernel pipe closed");
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** When a call with this limit stops waiting whatever happens: {@link #KILL_GRACE} after the watchdog's kill. */
    private static long hardDeadline(Duration timeout, Duration grace) {
        return timeout == null ? -1 : System.nanoTime() + timeout.plus(grace).plus(KILL_GRACE).toNanos();
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

    /**
     * Kills the kernel because the server will wait on it no longer ({@code why} says so), from any
     * thread: the call waiting on it, if any, ends with {@link KernelDiedException.Cause#UNANSWERED}.
     */
    public void abandon(String why) {
        abandoned = why;
        process.kill();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /**
     * The account of the restore that attached {@code dir} (the snapshot directory as the kernel sees
     * it), if that is the directory this kernel's snapshots go to; else null.
     */
    public Restored attachedTo(String dir) {
        Attachment last = attachment;
        return last != null && last.dir().equals(dir) ? last.restored() : null;
    }

    /**
     * Hands this kernel to {@code label} (a session), with its writable directory now at {@code
     * writableDir} (null: none): called once before its first request, also on a kernel started
     * warm under another label.
     */
    public void claim(String label, Path writableDir) throws IOException {
        reader.setName("kernel-frames-" + label);
        process.claim(label, writableDir);
    }

    /** {@link #call(KernelRequest, String, Duration, Duration, KernelCallbacks, CallContext)} for a control request. */
    public <R> KernelReply<R> call(KernelRequest<R> request, Duration timeout, Duration grace) throws KernelDiedException {
        return call(request, null, timeout, grace, KernelCallbacks.NONE, CallContext.NONE);
    }

    /**
     * Sends one request, with {@code text} (or null) streamed as its payload, and waits for its reply;
     * {@code timeout} null means no limit. The client's cancellation of the request {@code context}
     * stands for interrupts the call as its timeout would, without the kill. Callback requests the
     * kernel makes meanwhile go to {@code callbacks}, answered as they finish; when the call ends,
     * however it ends, callbacks still running are abandoned.
     */
    public <R> KernelReply<R> call(KernelRequest<R> request, String text, Duration timeout, Duration grace,
            KernelCallbacks callbacks, CallContext context) throws KernelDiedException {
        long id = ++nextId;
        long started = System.nanoTime();
        frameLimit = frameLimit(request);
        silence = silence(request, timeout, grace);
        BusyPoll.callStarted();
        try (Watchdog watchdog = new Watchdog(timeout, grace, true, context);
                CallbackScope scope = new CallbackScope(callbacks, this::write, json, watchdog::hold)) {
            ObjectNode header = frame(request, id);
            if (text != null) {
                watchdog.arm(); // a large payload can fill the pipe: a kernel that stops reading must not hold the write
            }
            writing.lock();
            try {
                if (text == null) {
                    codec.write(out, new Frame(header));
                } else {
                    codec.writeText(out, header, text);
                }
            } finally {
                writing.unlock();
            }
            while (true) {
                ObjectNode answer = next(watchdog::hardDeadline, watchdog::arm).header();
                boolean callback = answer.has("cb") || answer.has("cb_close");
                if (!callback && answer.path("id").asLong(-1) == id) {
                    long interruptedAfter = watchdog.fired() ? (System.nanoTime() - started) / 1_000_000 : -1;
                    KernelReply<R> reply = reply(request, answer, interruptedAfter);
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
        } catch (IOException e) {
            throw died();
        } finally {
            frameLimit = CONTROL_FRAME_BYTES;
            silence = null;
            BusyPoll.callEnded();
        }
    }

    private void write(ObjectNode header) throws IOException {
        writing.lock();
        try {
            codec.write(out, new Frame(header));
        } finally {
            writing.unlock();
        }
    }

    /**
     * Sends a request whose payload streams from {@code source} (bytes, read in bounded chunks as they
     * arrive) and waits for the reply. While bytes flow, the time limit and a client's cancellation
     * close the source: the stream is cut short, the kernel discards what it got and keeps its
     * variables, and the reason is thrown as {@link TransferAbortedException} once the kernel has
     * answered (as is a failure of the source itself). Once every byte is sent, the rest of the time
     * limit applies to the kernel's parsing as to any call: interrupt, then kill.
     */
    public <R> KernelReply<R> callStreaming(KernelRequest<R> request, InputStream source, Duration timeout,
            Duration grace, CallContext context) throws KernelDiedException, TransferAbortedException {
        long id = ++nextId;
        ObjectNode header = frame(request, id);
        long started = System.nanoTime();
        frameLimit = frameLimit(request);
        silence = silence(request, timeout, grace);
        AtomicReference<String> stopped = new AtomicReference<>();
        Runnable timedOut = () -> stop(stopped, "ran past its time limit of " + timeout.toSeconds() + " s", source);
        List<ScheduledFuture<?>> timers = new ArrayList<>();
        if (timeout != null) {
            timers.add(timer.schedule(timedOut, timeout.toMillis(), TimeUnit.MILLISECONDS));
            // a kernel that stops reading its pipe would leave the writer blocked for good
            timers.add(timer.schedule(process::kill, timeout.plus(grace).plusSeconds(5).toMillis(),
                    TimeUnit.MILLISECONDS));
        }
        BusyPoll.callStarted();
        try {
            IOException failure;
            try (CallContext.Registration cancelled = context.onCancel(
                    () -> stop(stopped, "was cancelled by the client", source))) {
                failure = codec.writeStream(out, header, source, () -> stopped.get() == null ? null
                        : new InterruptedIOException("the transfer " + stopped.get()));
            } finally {
                timers.forEach(t -> t.cancel(false));
            }
            if (failure != null && stopped.get() != null && !(failure instanceof InterruptedIOException)) {
                failure = new InterruptedIOException("the transfer " + stopped.get());
            }
            Duration left = timeout == null ? null
                    : Duration.ofNanos(Math.max(1_000_000, timeout.toNanos() - (System.nanoTime() - started)));
            // a stopped transfer leaves the kernel only discarding what it got: no interrupt, which could
            // otherwise land late, in the next call
            long deadline = hardDeadline(left, grace);
            try (Watchdog watchdog = new Watchdog(left, grace, failure == null, context)) {
                while (true) {
                    Frame frame = next(() -> deadline, watchdog::arm);
                    if (frame.header().path("id").asLong(-1) == id) {
                        if (failure != null) {
                            throw new TransferAbortedException(failure);
                        }
                        long interruptedAfter = watchdog.fired() ? (System.nanoTime() - started) / 1_000_000 : -1;
                        return reply(request, frame.header(), interruptedAfter);
                    }
                    watchdog.arm(); // as in call: only a reply that is the first frame skips the timers
                    log.debug("ignoring stray kernel frame {}", frame.header());
                }
            }
        } catch (IOException e) {
            throw died();
        } finally {
            frameLimit = CONTROL_FRAME_BYTES;
            silence = null;
            BusyPoll.callEnded();
        }
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

    @Override
    public void close() {
        closed = true;
        if (!process.isAlive()) {
            return;
        }
        try {
            write(json.createObjectNode().put("op", "shutdown"));
            if (process.waitFor(Duration.ofMillis(500))) {
                return;
            }
        } catch (IOException e) {
            log.debug("kernel {} did not take the shutdown request: {}", process.pid(), e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        process.kill();
    }

    /** Why this kernel, no longer alive, ended: for one found dead between calls. */
    public KernelDiedException death() {
        return died();
    }

    private KernelDiedException died() {
        String exit = process.end();
        if (violation != null) {
            return new KernelDiedException(KernelDiedException.Cause.PROTOCOL_VIOLATION, exit, violation);
        }
        if (stalled) {
            return new KernelDiedException(KernelDiedException.Cause.STOPPED, exit, "");
        }
        String unanswered = abandoned != null ? abandoned : silence;
        if (unanswered != null && process.killedByUs()) {
            return new KernelDiedException(KernelDiedException.Cause.UNANSWERED, exit, unanswered);
        }
        return new KernelDiedException(process.killedByUs() ? KernelDiedException.Cause.KILLED_AFTER_TIMEOUT
                : KernelDiedException.Cause.CRASHED, exit, process.lastWords());
    }

    /**
     * Interrupt at the timeout (and once more half-way through the grace), kill at timeout + grace.
     * A cancellation of the request this thread serves interrupts at once and half a grace later: the
     * second interrupt catches code that the first reached before the harness made it interruptible.
     */
    private final class Watchdog implements AutoCloseable {

        private static final long HOLD_CHECK_MS = 100;

        private final Duration timeout;
        private final long graceMs;
        private final boolean interrupting;
        private final long started = System.nanoTime();
        private final List<ScheduledFuture<?>> timers = new CopyOnWriteArrayList<>();
        private final CallContext.Registration cancellation;
        private boolean armed;
        private volatile boolean fired;
        private volatile boolean closed;
        /** Child RLMs the code waits for now: their time does not count against the call's limit. */
        private int holds;
        private long heldSince;
        private long heldNanos;
        private volatile ScheduledFuture<?> check;

        /** With {@code interrupting} false, only a kill at the end of the time limit and grace. */
        Watchdog(Duration timeout, Duration grace, boolean interrupting, CallContext context) {
            this.timeout = timeout;
            this.graceMs = grace.toMillis();
            this.interrupting = interrupting;
            cancellation = interrupting ? context.onCancel(this::cancelled) : () -> { };
        }

        /**
         * Sets the timers, counted from the call's start, once its wait is about to block: a reply that
         * comes while the wait still polls never touches the timer thread.
         */
        void arm() {
            if (armed || timeout == null) {
                return;
            }
            armed = true;
            check = timer.schedule(this::check, left(), TimeUnit.MILLISECONDS);
        }

        /** At the limit, counted without the time held: interrupt, again at half the grace, kill at its end. */
        private void check() {
            if (closed) {
                return;
            }
            long left = held() ? HOLD_CHECK_MS : left();
            if (left > 0) {
                check = timer.schedule(this::check, left, TimeUnit.MILLISECONDS);
                return;
            }
            if (interrupting) {
                interrupt();
                timers.add(timer.schedule(this::interrupt, graceMs / 2, TimeUnit.MILLISECONDS));
            }
            timers.add(timer.schedule(process::kill, graceMs, TimeUnit.MILLISECONDS));
        }

        /**
         * While the returned hold is open (the code waits for child RLMs, which have limits of their
         * own), the call's time limit stands still.
         */
        synchronized CallContext.Registration hold() {
            if (holds++ == 0) {
                heldSince = System.nanoTime();
            }
            return () -> {
                synchronized (Watchdog.this) {
                    if (--holds == 0) {
                        heldNanos += System.nanoTime() - heldSince;
                    }
                }
            };
        }

        private synchronized boolean held() {
            return holds > 0;
        }

        private synchronized long heldNow() {
            return heldNanos + (holds > 0 ? System.nanoTime() - heldSince : 0);
        }

        /** Milliseconds left of the limit, not counting the time held. */
        private long left() {
            return timeout.toMillis() - (System.nanoTime() - started - heldNow()) / 1_000_000;
        }

        /** When the call stops waiting whatever happens, moved on by the time held. */
        long hardDeadline() {
            return timeout == null ? -1
                    : started + heldNow() + timeout.plus(Duration.ofMillis(graceMs)).plus(KILL_GRACE).toNanos();
        }

        private void cancelled() {
            interrupt();
            timers.add(timer.schedule(this::interrupt, graceMs / 2, TimeUnit.MILLISECONDS));
        }

        private void interrupt() {
            fired = true;
            process.interrupt();
        }

        boolean fired() {
            return fired;
        }

        @Override
        public void close() {
            closed = true;
            cancellation.close();
            ScheduledFuture<?> pending = check;
            if (pending != null) {
                pending.cancel(false);
            }
            timers.forEach(t -> t.cancel(false));
        }
    }
}

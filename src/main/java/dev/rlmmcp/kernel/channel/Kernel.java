package dev.rlmmcp.kernel.channel;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.kernel.process.KernelLauncher;
import dev.rlmmcp.kernel.process.KernelProcess;
import dev.rlmmcp.kernel.process.KernelSpec;
import dev.rlmmcp.kernel.protocol.KernelRequest;
import dev.rlmmcp.kernel.protocol.Ready;
import dev.rlmmcp.kernel.protocol.Restored;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The framed pipe to one persistent CPython kernel ({@link KernelProcess} is its process): typed
 * requests out, typed replies back. Not thread-safe: its session serialises calls (callback answers
 * written meanwhile share the pipe under a lock). A call that outlives its timeout, or that its
 * client cancels, is interrupted (SIGINT semantics, variables kept); one that ignores the interrupt
 * for the grace period is killed. Three parts do the work: the {@link FramePump} reads frames, the
 * {@link Calls} match them to requests, and each call's {@link Watchdog} keeps its time limit; this
 * class starts the kernel, closes it and says why it died.
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

    private final KernelProcess process;
    private final ObjectMapper json;
    private final FramePump pump;
    private final Calls calls;
    /** Why the server gave up on this kernel from outside a call ({@link #abandon}), or null. */
    private volatile String abandoned;
    /** Run once {@link #close} has seen the process exit. */
    private volatile Runnable exited = () -> {};
    /** The harness's ready frame: its pid, Python, protocol version and reserved names. */
    private final Ready ready;

    private Kernel(
            KernelProcess process,
            ObjectMapper json,
            ScheduledExecutorService timer,
            String label,
            Duration startTimeout,
            int outputCap)
            throws KernelDiedException {
        this.process = process;
        this.json = json;
        FrameCodec codec = new FrameCodec(json);
        this.pump = new FramePump(process, codec, timer, label);
        this.calls = new Calls(process, pump, codec, json, timer, outputCap, this::died);
        ScheduledFuture<?> deadline = timer.schedule(process::kill, startTimeout.toMillis(), TimeUnit.MILLISECONDS);
        try {
            this.ready = Ready.of(pump.next(() -> -1, () -> {}).header());
            process.announced(ready.pid());
            if (!ready.compatible()) {
                pump.violated(ready.mismatch());
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
    public static Kernel start(
            KernelLauncher launcher,
            KernelSpec spec,
            ObjectMapper json,
            ScheduledExecutorService timer,
            String label,
            Duration startTimeout)
            throws IOException, KernelDiedException {
        return start(launcher, spec, json, timer, label, startTimeout, 20_000);
    }

    /** Starts a kernel and waits until its harness says it is ready; its exec replies are bounded by {@code outputCap}. */
    public static Kernel start(
            KernelLauncher launcher,
            KernelSpec spec,
            ObjectMapper json,
            ScheduledExecutorService timer,
            String label,
            Duration startTimeout,
            int outputCap)
            throws IOException, KernelDiedException {
        return new Kernel(KernelProcess.start(launcher, spec, label), json, timer, label, startTimeout, outputCap);
    }

    /** The largest frame a request may be answered with: what it can legitimately return, and no more. */
    long frameLimit(KernelRequest<?> request) {
        return calls.frameLimit(request);
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
        return calls.attachedTo(dir);
    }

    /**
     * Hands this kernel to {@code label} (a session), with its writable directory now at {@code
     * writableDir} (null: none): called once before its first request, also on a kernel started
     * warm under another label.
     */
    public void claim(String label, Path writableDir) throws IOException {
        pump.rename(label);
        process.claim(label, writableDir);
    }

    /** {@link #call(KernelRequest, String, Duration, Duration, KernelCallbacks, CallContext)} for a control request. */
    public <R> KernelReply<R> call(KernelRequest<R> request, Duration timeout, Duration grace)
            throws KernelDiedException {
        return call(request, null, timeout, grace, KernelCallbacks.NONE, CallContext.NONE);
    }

    /**
     * Sends one request, with {@code text} (or null) streamed as its payload, and waits for its reply;
     * {@code timeout} null means no limit. The client's cancellation of the request {@code context}
     * stands for interrupts the call as its timeout would, without the kill. Callback requests the
     * kernel makes meanwhile go to {@code callbacks}, answered as they finish; when the call ends,
     * however it ends, callbacks still running are abandoned.
     */
    public <R> KernelReply<R> call(
            KernelRequest<R> request,
            String text,
            Duration timeout,
            Duration grace,
            KernelCallbacks callbacks,
            CallContext context)
            throws KernelDiedException {
        return calls.call(request, text, timeout, grace, callbacks, context);
    }

    /**
     * Sends a request whose payload streams from {@code source} (bytes, read in bounded chunks as they
     * arrive) and waits for the reply. While bytes flow, the time limit and a client's cancellation
     * close the source: the stream is cut short, the kernel discards what it got and keeps its
     * variables, and the reason is thrown as {@link TransferAbortedException} once the kernel has
     * answered (as is a failure of the source itself). Once every byte is sent, the rest of the time
     * limit applies to the kernel's parsing as to any call: interrupt, then kill.
     */
    public <R> KernelReply<R> callStreaming(
            KernelRequest<R> request, InputStream source, Duration timeout, Duration grace, CallContext context)
            throws KernelDiedException, TransferAbortedException {
        return calls.callStreaming(request, source, timeout, grace, context);
    }

    /**
     * {@code then} runs as soon as {@link #close} sees the process exit: on the closing thread, before
     * close returns, where the JDK's exit callbacks run later on threads of their own.
     */
    public void whenClosed(Runnable then) {
        exited = then;
    }

    @Override
    public void close() {
        pump.close();
        if (!process.isAlive()) {
            exited.run();
            return;
        }
        try {
            calls.write(json.createObjectNode().put("op", "shutdown"));
            if (process.waitFor(Duration.ofMillis(500))) {
                exited.run();
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
        if (pump.violation() != null) {
            return new KernelDiedException(KernelDiedException.Cause.PROTOCOL_VIOLATION, exit, pump.violation());
        }
        if (pump.stalled()) {
            return new KernelDiedException(KernelDiedException.Cause.STOPPED, exit, "");
        }
        String unanswered = abandoned != null ? abandoned : calls.silence();
        if (unanswered != null && process.killedByUs()) {
            return new KernelDiedException(KernelDiedException.Cause.UNANSWERED, exit, unanswered);
        }
        return new KernelDiedException(
                process.killedByUs()
                        ? KernelDiedException.Cause.KILLED_AFTER_TIMEOUT
                        : KernelDiedException.Cause.CRASHED,
                exit,
                process.lastWords());
    }
}

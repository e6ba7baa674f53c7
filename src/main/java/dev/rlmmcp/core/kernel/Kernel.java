package dev.rlmmcp.core.kernel;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.Cancellation;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One persistent CPython process and the framed pipe to it. Not thread-safe: its session
 * serialises calls (callback answers written meanwhile share the pipe under a lock). A call that outlives its timeout is interrupted (SIGINT semantics, variables
 * kept); one that ignores the interrupt for the grace period is killed.
 */
public final class Kernel implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Kernel.class);
    private static final int LAST_WORDS_LINES = 20;

    private final KernelLauncher launcher;
    private final Process process;
    private final DataOutputStream out;
    private final DataInputStream in;
    private final FrameCodec codec;
    private final ObjectMapper json;
    private final ScheduledExecutorService timer;
    private final Deque<String> lastWords = new ArrayDeque<>();
    private final Thread diagnostics;
    private long nextId;
    private volatile boolean killedByUs;

    private Kernel(KernelLauncher launcher, Process process, ObjectMapper json, ScheduledExecutorService timer,
            String label, Duration startTimeout) throws IOException, KernelDiedException {
        this.launcher = launcher;
        this.process = process;
        this.json = json;
        this.timer = timer;
        this.codec = new FrameCodec(json);
        this.out = new DataOutputStream(new BufferedOutputStream(process.getOutputStream(), 1 << 16));
        this.in = new DataInputStream(new BufferedInputStream(process.getInputStream(), 1 << 16));
        this.diagnostics = Thread.ofVirtual().name("kernel-log-" + label).start(() -> relayDiagnostics(label));
        ScheduledFuture<?> deadline = timer.schedule(this::killNow, startTimeout.toMillis(), TimeUnit.MILLISECONDS);
        try {
            codec.read(in);
        } catch (IOException e) {
            throw died();
        } finally {
            deadline.cancel(false);
        }
    }

    /** Starts a kernel and waits until its harness says it is ready. */
    public static Kernel start(KernelLauncher launcher, KernelSpec spec, ObjectMapper json,
            ScheduledExecutorService timer, String label, Duration startTimeout) throws IOException, KernelDiedException {
        return new Kernel(launcher, launcher.start(spec), json, timer, label, startTimeout);
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** {@link #call(ObjectNode, String, Duration, Duration, KernelCallbacks)} with no callbacks offered. */
    public KernelReply call(ObjectNode request, String text, Duration timeout, Duration grace)
            throws KernelDiedException {
        return call(request, text, timeout, grace, KernelCallbacks.NONE);
    }

    /**
     * Sends one request, with {@code text} (or null) streamed as its payload, and waits for its reply;
     * {@code timeout} null means no limit. A client's cancellation of the MCP request this thread
     * serves interrupts the request as its timeout would, without the kill. Callback requests the
     * kernel makes meanwhile go to {@code callbacks}, answered as they finish; when the call ends,
     * however it ends, callbacks still running are abandoned.
     */
    public KernelReply call(ObjectNode request, String text, Duration timeout, Duration grace,
            KernelCallbacks callbacks) throws KernelDiedException {
        long id = ++nextId;
        request.put("id", id);
        long started = System.nanoTime();
        try (Watchdog watchdog = new Watchdog(timeout, grace, true);
                CallbackScope scope = new CallbackScope(callbacks, this::write, json)) {
            synchronized (out) {
                if (text == null) {
                    codec.write(out, new Frame(request));
                } else {
                    codec.writeText(out, request, text);
                }
            }
            while (true) {
                Frame frame = codec.read(in);
                ObjectNode header = frame.header();
                if (header.has("cb")) {
                    scope.dispatch(header);
                } else if (header.has("cb_close")) {
                    scope.close();
                    write(json.createObjectNode().put("cb_closed", true));
                } else if (header.path("id").asLong(-1) == id) {
                    long interruptedAfter = watchdog.fired() ? (System.nanoTime() - started) / 1_000_000 : -1;
                    return new KernelReply(header, interruptedAfter);
                } else {
                    log.debug("ignoring stray kernel frame {}", header);
                }
            }
        } catch (IOException e) {
            throw died();
        }
    }

    private void write(ObjectNode header) throws IOException {
        synchronized (out) {
            codec.write(out, new Frame(header));
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
    public KernelReply callStreaming(ObjectNode request, InputStream source, Duration timeout, Duration grace)
            throws KernelDiedException, TransferAbortedException {
        long id = ++nextId;
        request.put("id", id);
        long started = System.nanoTime();
        AtomicReference<String> stopped = new AtomicReference<>();
        Runnable timedOut = () -> stop(stopped, "ran past its time limit of " + timeout.toSeconds() + " s", source);
        List<ScheduledFuture<?>> timers = new ArrayList<>();
        if (timeout != null) {
            timers.add(timer.schedule(timedOut, timeout.toMillis(), TimeUnit.MILLISECONDS));
            // a kernel that stops reading its pipe would leave the writer blocked for good
            timers.add(timer.schedule(this::killNow, timeout.plus(grace).plusSeconds(5).toMillis(),
                    TimeUnit.MILLISECONDS));
        }
        try {
            IOException failure;
            try (Cancellation.Registration cancelled = Cancellation.onCancel(
                    () -> stop(stopped, "was cancelled by the client", source))) {
                failure = codec.writeStream(out, request, source, () -> stopped.get() == null ? null
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
            try (Watchdog watchdog = new Watchdog(left, grace, failure == null)) {
                while (true) {
                    Frame frame = codec.read(in);
                    if (frame.header().path("id").asLong(-1) == id) {
                        if (failure != null) {
                            throw new TransferAbortedException(failure);
                        }
                        long interruptedAfter = watchdog.fired() ? (System.nanoTime() - started) / 1_000_000 : -1;
                        return new KernelReply(frame.header(), interruptedAfter);
                    }
                    log.debug("ignoring stray kernel frame {}", frame.header());
                }
            }
        } catch (IOException e) {
            throw died();
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
        if (!process.isAlive()) {
            return;
        }
        try {
            write(json.createObjectNode().put("op", "shutdown"));
            if (process.waitFor(500, TimeUnit.MILLISECONDS)) {
                return;
            }
        } catch (IOException e) {
            log.debug("kernel {} did not take the shutdown request: {}", process.pid(), e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        killNow();
    }

    /** Why this kernel, no longer alive, ended: for one found dead between calls. */
    public KernelDiedException death() {
        return died();
    }

    private void killNow() {
        killedByUs = true;
        launcher.kill(process);
    }

    private KernelDiedException died() {
        launcher.kill(process);
        try {
            process.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        String why = launcher.whyEnded(process);
        String exit = process.isAlive() ? "still running" : why != null ? why : describeExit(process.exitValue());
        try {
            diagnostics.join(Duration.ofSeconds(1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        String words;
        synchronized (lastWords) {
            words = String.join("\n", lastWords);
        }
        return new KernelDiedException(killedByUs ? KernelDiedException.Cause.KILLED_AFTER_TIMEOUT
                : KernelDiedException.Cause.CRASHED, exit, words);
    }

    static String describeExit(int status) {
        if (status > 128 && status < 160) {
            int signal = status - 128;
            String name = switch (signal) {
                case 6 -> "SIGABRT";
                case 9 -> "SIGKILL, e.g. the out-of-memory killer";
                case 11 -> "SIGSEGV, a segmentation fault";
                case 15 -> "SIGTERM";
                default -> "signal " + signal;
            };
            return "killed by " + name;
        }
        return "exit status " + status;
    }

    private void relayDiagnostics(String label) {
        try (BufferedReader reader = new BufferedReader(
                new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                log.warn("kernel {}: {}", label, line);
                synchronized (lastWords) {
                    lastWords.addLast(line);
                    if (lastWords.size() > LAST_WORDS_LINES) {
                        lastWords.removeFirst();
                    }
                }
            }
        } catch (IOException e) {
            log.debug("kernel {} stderr closed: {}", label, e.toString());
        }
    }

    /**
     * Interrupt at the timeout (and once more half-way through the grace), kill at timeout + grace.
     * A cancellation of the request this thread serves interrupts at once and half a grace later: the
     * second interrupt catches code that the first reached before the harness made it interruptible.
     */
    private final class Watchdog implements AutoCloseable {

        private final long graceMs;
        private final List<ScheduledFuture<?>> timers = new CopyOnWriteArrayList<>();
        private final Cancellation.Registration cancellation;
        private volatile boolean fired;

        /** With {@code interrupting} false, only a kill at the end of the time limit and grace. */
        Watchdog(Duration timeout, Duration grace, boolean interrupting) {
            graceMs = grace.toMillis();
            if (timeout != null) {
                long t = timeout.toMillis();
                if (interrupting) {
                    timers.add(timer.schedule(this::interrupt, t, TimeUnit.MILLISECONDS));
                    timers.add(timer.schedule(this::interrupt, t + graceMs / 2, TimeUnit.MILLISECONDS));
                }
                timers.add(timer.schedule(Kernel.this::killNow, t + graceMs, TimeUnit.MILLISECONDS));
            }
            cancellation = interrupting ? Cancellation.onCancel(this::cancelled) : () -> { };
        }

        private void cancelled() {
            interrupt();
            timers.add(timer.schedule(this::interrupt, graceMs / 2, TimeUnit.MILLISECONDS));
        }

        private void interrupt() {
            fired = true;
            launcher.interrupt(process);
        }

        boolean fired() {
            return fired;
        }

        @Override
        public void close() {
            cancellation.close();
            timers.forEach(t -> t.cancel(false));
        }
    }
}

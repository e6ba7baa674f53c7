package dev.rlmmcp.kernel.channel;

import dev.rlmmcp.kernel.process.KernelProcess;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The frames a kernel writes on its stdout, read only while a call waits on them: by the caller
 * itself when it is a platform thread (no hand-off between threads on the reply's path), and for a
 * virtual thread by a small platform thread of the kernel's own, which hands it the frames (a virtual
 * thread blocked in a native pipe read would hold its carrier). A platform thread polls the pipe for
 * a moment before it blocks ({@link BusyPoll}). Each frame is checked against the size the request in
 * flight can legitimately return ({@link #limit}) before anything is allocated; a frame that breaks
 * the protocol kills the kernel. A kernel whose process is stopped (SIGSTOP) while a call waits is
 * killed within about a second.
 */
final class FramePump {

    private static final Logger log = LoggerFactory.getLogger(FramePump.class);
    /** How often a call that waits checks that the kernel's process is not stopped. */
    private static final long STALL_CHECK_MS = 1000;

    private static final Object END = new Object();

    private final KernelProcess process;
    private final DataInputStream in;
    private final FrameCodec codec;
    private final ScheduledExecutorService timer;
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
    /** The largest frame the request in flight may be answered with. */
    private volatile long frameLimit = Kernel.CONTROL_FRAME_BYTES;

    private volatile String violation;
    private volatile boolean stalled;
    /** The pipe has ended, or the kernel broke the protocol on it: no frame will come. */
    private volatile boolean pipeEnded;

    private volatile boolean closed;

    FramePump(KernelProcess process, FrameCodec codec, ScheduledExecutorService timer, String label) {
        this.process = process;
        this.codec = codec;
        this.timer = timer;
        this.in = new DataInputStream(new BufferedInputStream(process.stdout(), 1 << 16));
        this.reader = Thread.ofPlatform()
                .daemon()
                .stackSize(1 << 20)
                .name("kernel-frames-" + label)
                .start(this::readFrames);
    }

    /** From now on, frames over {@code bytes} break the protocol (until the call ends and {@link #reset}s it). */
    void limit(long bytes) {
        frameLimit = bytes;
    }

    void reset() {
        frameLimit = Kernel.CONTROL_FRAME_BYTES;
    }

    /** How the kernel broke the protocol, or null. */
    String violation() {
        return violation;
    }

    /** Records how the kernel broke the protocol (the caller kills it or lets its end do so). */
    void violated(String why) {
        violation = why;
    }

    /** True if the kernel was killed because its process was stopped while a call waited. */
    boolean stalled() {
        return stalled;
    }

    void rename(String label) {
        reader.setName("kernel-frames-" + label);
    }

    /** The kernel is closing: the reader thread ends within a second. */
    void close() {
        closed = true;
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
        ScheduledFuture<?> stallCheck = timer.scheduleWithFixedDelay(
                this::killIfStopped, STALL_CHECK_MS, STALL_CHECK_MS, TimeUnit.MILLISECONDS);
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
     * The next frame, waiting until {@code deadlines} says (System.nanoTime; -1: no limit): read by
     * this thread if it is a platform thread, else by the reader thread for it; an interrupt of the
     * caller does not cut the wait short (it is kept for later). Every second of waiting, a kernel
     * whose process is stopped is killed. Throws when the pipe has ended, or at the deadline, after
     * killing the kernel.
     */
    Frame next(LongSupplier deadlines, Runnable blocking) throws IOException {
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
}

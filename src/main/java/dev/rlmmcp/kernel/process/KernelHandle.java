package dev.rlmmcp.kernel.process;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * One launched kernel as its launcher sees it: the process whose pipes carry the protocol, and what
 * the launcher keeps for this kernel alone (how to interrupt and kill it, the watch on its writable
 * directory, why the launcher ended it), so that this state lives and dies with the kernel instead of
 * in launcher-wide tables keyed by process id. The shape of jupyter_client's provisioners, one per
 * kernel (poll, wait, send_signal, kill). This class is a plain child process's handle; a sandbox
 * that signals or watches its kernels otherwise extends it.
 */
public class KernelHandle {

    private final Process process;

    public KernelHandle(Process process) {
        this.process = process;
    }

    /** The process the launcher started: its stdin, stdout and stderr are the kernel's. */
    public final Process process() {
        return process;
    }

    public final long pid() {
        return process.pid();
    }

    public final boolean isAlive() {
        return process.isAlive();
    }

    public final boolean waitFor(Duration wait) throws InterruptedException {
        return process.waitFor(wait.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Asks the kernel to stop the running code with SIGINT; its variables survive. The JDK cannot
     * send SIGINT itself, so kill(1) does; without it, SIGTERM, which the harness treats the same.
     * (Process.destroy() would also close our ends of the pipes, so the handle is used.)
     */
    public void interrupt() {
        if (!signal("-INT", process.pid())) {
            process.toHandle().destroy();
        }
    }

    /** Ends the kernel at once (SIGKILL). */
    public void kill() {
        process.destroyForcibly();
    }

    /**
     * The kernel's writable directory is {@code hostDir} from now on: the one it was started with, or
     * the one that directory was renamed to when a warm kernel was claimed (a bind mount follows the
     * rename). Called before the kernel is asked to touch it; makes it the kernel's (owner, quota).
     */
    public void attach(Path hostDir) throws IOException {}

    /** Why the launcher itself ended this kernel (e.g. a limit it enforces), or null. */
    public String whyEnded() {
        return null;
    }

    /** Sends {@code signal} (as kill(1) names it) to {@code pid}; false if kill(1) cannot run. */
    static boolean signal(String signal, long pid) {
        try {
            new ProcessBuilder("kill", signal, Long.toString(pid))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}

package dev.rlmmcp.kernel.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** How a kernel process is started and signalled: plain process today, sandboxes as further launchers. */
public interface KernelLauncher {

    /** The name reported in /health, e.g. "process". */
    String name();

    Process start(KernelSpec spec) throws IOException;

    /** Where the kernel sees the spec's writable directory (its host path unless the sandbox moves it). */
    default java.nio.file.Path writableDirInside(java.nio.file.Path hostDir) {
        return hostDir;
    }

    /** True when kernels run as a uid of their own, so that RLIMIT_NPROC counts only their processes. */
    default boolean isolatesUser() {
        return false;
    }

    /**
     * The kernel's writable directory is {@code hostDir} from now on: the one it was started with, or
     * the one that directory was renamed to when a warm kernel was claimed (a bind mount follows the
     * rename). Called before the kernel is asked to touch it; makes it the kernel's (owner, quota).
     */
    default void attach(Process process, java.nio.file.Path hostDir) throws IOException {
    }

    /**
     * Asks the kernel to stop the running code with SIGINT; its variables survive. The JDK cannot
     * send SIGINT itself, so kill(1) does; without it, SIGTERM, which the harness treats the same.
     * (Process.destroy() would also close our ends of the pipes, so the handle is used.)
     */
    default void interrupt(Process process) {
        try {
            new ProcessBuilder("kill", "-INT", Long.toString(process.pid()))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
        } catch (java.io.IOException e) {
            process.toHandle().destroy();
        }
    }

    /** setsid(1), from util-linux. */
    Path SETSID = Path.of("/usr/bin/setsid");

    /**
     * {@code command} run in a session (and so a process group) of its own, through setsid(1), which
     * execs it in place: a client that stops the server with a signal to the server's process group
     * (Codex sends SIGTERM to it, then SIGKILL) reaches the server alone, which then saves and stops
     * its kernels itself. Each launcher also makes its kernel die with the server however it ends.
     */
    static List<String> inOwnSession(List<String> command) {
        if (!Files.isExecutable(SETSID)) {
            return command;
        }
        List<String> own = new ArrayList<>(command.size() + 1);
        own.add(SETSID.toString());
        own.addAll(command);
        return own;
    }

    default void kill(Process process) {
        process.destroyForcibly();
    }

    /** Why the launcher itself ended this kernel (e.g. a limit it enforces), or null. */
    default String whyEnded(Process process) {
        return null;
    }
}

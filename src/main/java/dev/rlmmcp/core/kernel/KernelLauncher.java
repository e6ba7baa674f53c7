package dev.rlmmcp.core.kernel;

import java.io.IOException;

/** How a kernel process is started and signalled: plain process today, sandboxes as further launchers. */
public interface KernelLauncher {

    /** The name reported in /health, e.g. "process". */
    String name();

    Process start(KernelSpec spec) throws IOException;

    /**
     * Asks the kernel to stop the running code; its variables survive. The harness treats SIGTERM
     * like SIGINT. (Process.destroy() would also close our ends of the pipes, so the handle is used.)
     */
    default void interrupt(Process process) {
        process.toHandle().destroy();
    }

    default void kill(Process process) {
        process.destroyForcibly();
    }
}

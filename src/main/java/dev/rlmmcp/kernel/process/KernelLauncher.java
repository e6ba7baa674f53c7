package dev.rlmmcp.kernel.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How kernel processes are started: a plain process, or a sandbox. Each start returns the kernel's
 * own {@link KernelHandle}, which signals it and keeps what the launcher knows of it.
 */
public interface KernelLauncher {

    /** The name reported in /health, e.g. "process". */
    String name();

    KernelHandle start(KernelSpec spec) throws IOException;

    /** Where the kernel sees the spec's writable directory (its host path unless the sandbox moves it). */
    default Path writableDirInside(Path hostDir) {
        return hostDir;
    }

    /** True when kernels run as a uid of their own, so that RLIMIT_NPROC counts only their processes. */
    default boolean isolatesUser() {
        return false;
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
}

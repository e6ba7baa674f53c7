package dev.rlmmcp.e2e.support;

import java.nio.file.Path;
import java.util.function.IntPredicate;

/** The kernels a server with its own --runtime-dir has running, counted from the process table. */
public final class Kernels {

    private Kernels() {}

    /**
     * Sandboxes whose command line names a path under {@code runtimeDir} (the harness they run), counting
     * one per kernel: a process whose parent names one too is part of its parent's kernel. The server's
     * own command line names the directory itself, not a path under it.
     */
    public static int running(Path runtimeDir) {
        String dir = runtimeDir + "/";
        return (int) ProcessHandle.allProcesses()
                .filter(ProcessHandle::isAlive)
                .filter(p -> p.info().commandLine().orElse("").contains(dir))
                .filter(p -> p.parent()
                        .map(parent -> !parent.info().commandLine().orElse("").contains(dir))
                        .orElse(true))
                .count();
    }

    /** Waits up to {@code ms} for the count to satisfy {@code until}; returns the milliseconds it took, or -1. */
    public static long await(Path runtimeDir, IntPredicate until, long ms) throws InterruptedException {
        long start = System.nanoTime();
        while ((System.nanoTime() - start) / 1_000_000 < ms) {
            if (until.test(running(runtimeDir))) {
                return (System.nanoTime() - start) / 1_000_000;
            }
            Thread.sleep(20);
        }
        return until.test(running(runtimeDir)) ? ms : -1;
    }
}

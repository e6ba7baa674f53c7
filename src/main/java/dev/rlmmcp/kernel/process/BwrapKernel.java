package dev.rlmmcp.kernel.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One kernel in a bubblewrap sandbox: the uid it runs as (given back to its range when it exits), its
 * Python process's host pid once found, the watch that keeps its snapshot directory to the disk limit,
 * and why it was ended when the limit ended it.
 */
final class BwrapKernel extends KernelHandle {

    private final int uid;
    /** Whether kernels run as uids of their own (as root): the files an earlier kernel left are handed over too. */
    private final boolean ownUids;

    private final boolean privileged;
    private final SnapshotQuota quota;
    private volatile long python = -1;
    /** What stops the disk quota watch on the kernel's writable directory (attached again when claimed). */
    private volatile DirQuota.Watch watch;

    private volatile String ending;

    BwrapKernel(Process process, int uid, KernelUids range, boolean privileged, SnapshotQuota quota) {
        super(process);
        this.uid = uid;
        this.ownUids = range != null;
        this.privileged = privileged;
        this.quota = quota;
        if (range != null) {
            process.onExit().thenRun(() -> range.give(uid));
        }
    }

    /**
     * Cuts the directory back if its last kernel was killed over the limit, gives it and the files in
     * it to the kernel's uid (as root), and keeps it to the disk limit from now on (in place of the
     * directory it was attached before, for a warm kernel claimed).
     */
    @Override
    public synchronized void attach(Path dir) throws IOException {
        if (!isAlive()) {
            throw new IOException("the kernel has ended");
        }
        long allowed = quota.allowance(dir);
        if (privileged) {
            handOver(dir, uid, ownUids);
        }
        DirQuota.Watch earlier = watch;
        watch = DirQuota.watch(dir, allowed, process(), () -> {
            ending = "killed: it wrote more than its " + (quota.diskBytes() >> 20) + " MiB disk limit "
                    + "(--max-disk-mb) into its snapshot directory";
            quota.overrun(dir);
            kill();
        });
        if (earlier != null) {
            earlier.stopLater();
        }
    }

    /**
     * Gives the snapshot directory to the kernel's uid and, when kernels have uids of their own, the
     * files an earlier kernel of the session left in it (the snapshot is one level of regular files):
     * never anything below it and never through a link, since that kernel may have planted either.
     */
    private static void handOver(Path dir, int uid, boolean files) throws IOException {
        List<Path> paths = new ArrayList<>(List.of(dir));
        if (files) {
            try (Stream<Path> entries = Files.list(dir)) {
                entries.filter(p -> Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS))
                        .forEach(paths::add);
            }
        }
        for (Path path : paths) {
            Files.setAttribute(path, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
            Files.setAttribute(path, "unix:gid", uid, LinkOption.NOFOLLOW_LINKS);
        }
    }

    @Override
    public String whyEnded() {
        return ending;
    }

    /** SIGINT to the Python process itself: bwrap does not forward signals. */
    @Override
    public void interrupt() {
        pythonPid()
                .ifPresentOrElse(
                        pid -> {
                            if (!signal("-INT", pid)) {
                                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroy);
                            }
                        },
                        () -> process().toHandle().destroy());
    }

    /**
     * SIGKILL to the sandbox. Once Python runs, to it and to bwrap, whose namespace child then dies
     * with it (its parent-death signal). Before, that child may be waiting for a word from bwrap with
     * no parent-death signal set yet: bwrap killed alone then (a kernel stopped as it starts) left it
     * waiting for good, a child of pid 1. So bwrap is first stopped (it can then make no child), and
     * its children (pid 1 of the namespace, whose end ends every process in it) are killed before it.
     */
    @Override
    public void kill() {
        Process process = process();
        Optional<Long> python = pythonPid();
        python.flatMap(ProcessHandle::of).ifPresent(ProcessHandle::destroyForcibly);
        if (python.isEmpty() && process.isAlive()) {
            stop(process.pid());
            process.toHandle().children().forEach(ProcessHandle::destroyForcibly);
        }
        process.destroyForcibly();
    }

    /** SIGSTOP to {@code pid}, waiting (briefly) until it has stopped or ended. */
    private static void stop(long pid) {
        try {
            Process kill = new ProcessBuilder("kill", "-STOP", Long.toString(pid))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            if (!kill.waitFor(2, TimeUnit.SECONDS)) {
                kill.destroyForcibly();
                return;
            }
            Path stat = Path.of("/proc", Long.toString(pid), "stat");
            for (int i = 0; i < 200; i++) {
                String line = Files.readString(stat);
                char state = line.charAt(line.lastIndexOf(')') + 2);
                if (state == 'T' || state == 't' || state == 'Z') {
                    return;
                }
                Thread.onSpinWait();
                Thread.sleep(0, 500_000);
            }
        } catch (IOException | RuntimeException e) {
            // ended, or kill(1) is missing: its children are still killed before it
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The host pid of the Python process: bwrap's own init is its child (pid 1 inside), and Python
     * the first child of that init; later children of the init are orphans user code left behind.
     */
    private Optional<Long> pythonPid() {
        Process process = process();
        long known = python;
        if (known > 0 && process.isAlive()) {
            return Optional.of(known); // not once the sandbox has ended: its pid may be another process's by now
        }
        Optional<Long> found = process.toHandle()
                .children()
                .flatMap(ProcessHandle::children)
                .min(Comparator.comparing(h -> h.info().startInstant().orElse(Instant.MAX)))
                .map(ProcessHandle::pid);
        found.ifPresent(pid -> {
            if (process.isAlive()) {
                python = pid;
            }
        });
        return found;
    }
}

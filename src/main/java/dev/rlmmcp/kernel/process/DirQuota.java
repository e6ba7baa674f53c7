package dev.rlmmcp.kernel.process;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a kernel's writable host directory (its snapshot directory) within a disk limit: the
 * directory is measured every {@link #PERIOD_MS} ms and a kernel found over the limit is killed; its
 * session comes back from its last snapshot, whose files the new kernel's store keeps while it sweeps
 * away every other one. The harness checks the limit itself before each snapshot file it writes, so
 * honest code gets an OSError (ENOSPC) and never meets this; code that writes there directly can
 * overshoot by what it writes in one period (RLIMIT_FSIZE bounds any single file).
 *
 * <p>Usage counts every file by its size rounded up to 4 KiB blocks, directories included, and a
 * hard-linked inode once; a sparse file counts at its full size; links are never followed.
 */
final class DirQuota {

    static final long PERIOD_MS = 50;
    static final long BLOCK = 4096;
    private static final Logger log = LoggerFactory.getLogger(DirQuota.class);
    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon().name("disk-quota").factory());

    private DirQuota() {
    }

    /** Watches {@code dir} until {@code process} ends or the returned action is run. */
    static Runnable watch(Path dir, long limit, Process process, Runnable kill) {
        AtomicReference<ScheduledFuture<?>> task = new AtomicReference<>();
        task.set(TIMER.scheduleWithFixedDelay(() -> {
            if (!process.isAlive()) {
                task.get().cancel(false);
                return;
            }
            long used = usage(dir, limit);
            if (used > limit) {
                log.warn("kernel {} wrote more than its {} MiB into {}: killed", process.pid(), limit >> 20, dir);
                kill.run();
                task.get().cancel(false);
            }
        }, PERIOD_MS, PERIOD_MS, TimeUnit.MILLISECONDS));
        Runnable stop = () -> task.get().cancel(false);
        process.onExit().thenRun(stop);
        return stop;
    }

    /** Bytes the tree holds, measured until it passes {@code stopAbove}. */
    static long usage(Path dir, long stopAbove) {
        long[] total = {0};
        Set<Object> seen = new HashSet<>();
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes a) {
                    return add(d, a);
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes a) {
                    return add(file, a);
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) {
                    return FileVisitResult.CONTINUE;
                }

                private FileVisitResult add(Path p, BasicFileAttributes a) {
                    if (!a.isDirectory() && a.fileKey() != null && !seen.add(a.fileKey())) {
                        return FileVisitResult.CONTINUE;
                    }
                    total[0] += Math.max(BLOCK, (a.size() + BLOCK - 1) / BLOCK * BLOCK);
                    return total[0] > stopAbove ? FileVisitResult.TERMINATE : FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            // gone meanwhile: what was counted stands
        }
        return total[0];
    }
}

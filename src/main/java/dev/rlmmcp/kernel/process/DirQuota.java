package dev.rlmmcp.kernel.process;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a kernel's writable host directory (its snapshot directory) within a disk limit: the
 * directory is measured at most {@link #PERIOD_MS} ms after anything in it changes, and a kernel
 * found over the limit is killed; its session comes back from its last snapshot, whose files the new
 * kernel's store keeps while it sweeps away every other one. The harness checks the limit itself
 * before each snapshot file it writes, so honest code gets an OSError (ENOSPC) and never meets this;
 * code that writes there directly can overshoot by what it writes in one period (RLIMIT_FSIZE bounds
 * any single file).
 *
 * <p>Changes are seen through inotify (every directory of the tree is watched, each registered
 * before its entries are counted), so an idle kernel costs nothing however many there are. Where
 * inotify is not to be had (no watch left, events lost), the directory is measured every period.
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
    private static final Map<WatchKey, Watch> BY_KEY = new ConcurrentHashMap<>();
    private static final Set<Watch> ALL = ConcurrentHashMap.newKeySet();
    private static final WatchService CHANGES = changes();

    private DirQuota() {}

    /** Watches {@code dir} until {@code process} ends or the returned watch is stopped. */
    static Watch watch(Path dir, long limit, Process process, Runnable kill) {
        Watch watch = new Watch(dir, limit, process, kill);
        ALL.add(watch);
        process.onExit().thenRun(watch::stop);
        // not at once: a claimed kernel's first call is about to run, and what is written meanwhile is
        // counted by this first measurement, which watches each directory before it counts its entries
        watch.soon(PERIOD_MS);
        return watch;
    }

    /** Bytes the tree holds, measured until it passes {@code stopAbove}. */
    static long usage(Path dir, long stopAbove) {
        return usage(dir, stopAbove, d -> {});
    }

    /** {@code entering} is told of each directory before its entries are read. */
    private static long usage(Path dir, long stopAbove, Consumer<Path> entering) {
        long[] total = {0};
        Set<Object> seen = new HashSet<>();
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes a) {
                    entering.accept(d);
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

    private static WatchService changes() {
        try {
            WatchService service = FileSystems.getDefault().newWatchService();
            Thread.ofPlatform().daemon().name("disk-quota-changes").start(() -> dispatch(service));
            return service;
        } catch (IOException | UnsupportedOperationException e) {
            log.info("no inotify for the disk limit ({}): snapshot directories are measured every {} ms", e, PERIOD_MS);
            return null;
        }
    }

    private static void dispatch(WatchService service) {
        try {
            while (true) {
                WatchKey key = service.take();
                boolean lost = key.pollEvents().stream().anyMatch(e -> e.kind() == StandardWatchEventKinds.OVERFLOW);
                Watch watch = BY_KEY.get(key);
                if (!key.reset()) {
                    BY_KEY.remove(key);
                }
                if (lost) {
                    ALL.forEach(w -> w.soon(PERIOD_MS));
                } else if (watch != null) {
                    watch.soon(PERIOD_MS);
                }
            }
        } catch (InterruptedException | ClosedWatchServiceException e) {
            log.warn("disk limit: no longer told of changes ({}); measuring every {} ms", e, PERIOD_MS);
            ALL.forEach(w -> w.polling.set(true));
            ALL.forEach(w -> w.soon(PERIOD_MS));
        }
    }

    /** One kernel's directory: measured once after each burst of changes, or every period when polling. */
    static final class Watch {
        private final Path dir;
        private final long limit;
        private final Process process;
        private final Runnable kill;
        private final Set<WatchKey> keys = ConcurrentHashMap.newKeySet();
        private final AtomicBoolean due = new AtomicBoolean();
        private final AtomicBoolean polling = new AtomicBoolean(CHANGES == null);
        private volatile boolean stopped;
        private volatile ScheduledFuture<?> next;
        private final AtomicLong measured = new AtomicLong();

        Watch(Path dir, long limit, Process process, Runnable kill) {
            this.dir = dir;
            this.limit = limit;
            this.process = process;
            this.kill = kill;
        }

        /** A measurement within {@code delayMs}, unless one is already due. */
        void soon(long delayMs) {
            if (stopped || !due.compareAndSet(false, true)) {
                return;
            }
            next = TIMER.schedule(this::measure, delayMs, TimeUnit.MILLISECONDS);
            if (stopped) {
                next.cancel(false);
            }
        }

        private void measure() {
            // changes from here on ask for another measurement
            due.set(false);
            if (stopped || !process.isAlive()) {
                stop();
                return;
            }
            measured.incrementAndGet();
            long used = usage(dir, limit, this::register);
            if (used > limit) {
                log.warn("kernel {} wrote more than its {} MiB into {}: killed", process.pid(), limit >> 20, dir);
                kill.run();
                stop();
            } else if (polling.get()) {
                soon(PERIOD_MS);
            }
        }

        private void register(Path d) {
            if (polling.get()) {
                return;
            }
            try {
                WatchKey key =
                        d.register(CHANGES, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_MODIFY);
                keys.add(key);
                BY_KEY.put(key, this);
                if (stopped) {
                    stop();
                }
            } catch (IOException | ClosedWatchServiceException e) {
                // out of inotify watches, say: this directory is measured every period from now on
                log.info("disk limit of {}: {} not watched ({}); measuring every {} ms", dir, d, e, PERIOD_MS);
                polling.set(true);
            }
        }

        /**
         * Stops watching from the watcher's own thread, off the caller's path: cancelling a watch waits
         * for the watch service's thread. Until then it measures its path, which a renamed directory
         * has left.
         */
        void stopLater() {
            TIMER.execute(this::stop);
        }

        long measurements() {
            return measured.get();
        }

        /** Stops watching. */
        void stop() {
            stopped = true;
            ALL.remove(this);
            ScheduledFuture<?> pending = next;
            if (pending != null) {
                pending.cancel(false);
            }
            for (WatchKey key : keys) {
                // a directory watched again (a warm kernel's, renamed for the session that claimed it)
                // has one key, which the newer watch has taken over
                if (BY_KEY.remove(key, this)) {
                    key.cancel();
                }
            }
            keys.clear();
        }
    }
}

package dev.rlmmcp.kernel.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How the watcher measures a directory a kernel writes. */
class DirQuotaTest {

    private static final long LIMIT = 1 << 20;

    @TempDir
    Path dir;

    private Process kernel;

    @AfterEach
    void endKernel() {
        if (kernel != null) {
            kernel.destroyForcibly();
        }
    }

    private Process kernel() throws Exception {
        kernel = new ProcessBuilder("sleep", "60").start();
        return kernel;
    }

    @Test
    void sizesRoundUpToBlocksAHardLinkCountsOnceASparseFileAtItsSizeAndLinksAreNotFollowed() throws Exception {
        Path big = Files.write(Files.createDirectories(dir.resolve("elsewhere")).resolve("big"), new byte[1 << 20]);
        Path watched = Files.createDirectories(dir.resolve("w"));
        long base = DirQuota.usage(watched, Long.MAX_VALUE);
        assertThat(base).isEqualTo(DirQuota.BLOCK); // the directory itself
        Files.writeString(watched.resolve("a"), "x");
        Files.createLink(watched.resolve("a-again"), watched.resolve("a"));
        Files.createFile(watched.resolve("empty"));
        Files.createSymbolicLink(watched.resolve("link"), big.getParent());
        try (RandomAccessFile sparse =
                new RandomAccessFile(watched.resolve("sparse").toFile(), "rw")) {
            sparse.setLength(10L << 20);
        }
        long expected =
                base + DirQuota.BLOCK /* a */ + DirQuota.BLOCK /* empty */ + DirQuota.BLOCK /* link */ + (10L << 20);
        assertThat(DirQuota.usage(watched, Long.MAX_VALUE)).isEqualTo(expected);
        assertThat(DirQuota.usage(watched, 1 << 20)).isGreaterThan(1 << 20).isLessThanOrEqualTo(expected);
    }

    @Test
    void aKernelIdleForAWhileThatThenWritesPastItsLimitInADirectoryMadeSinceIsKilled() throws Exception {
        CountDownLatch killed = new CountDownLatch(1);
        DirQuota.Watch watch = DirQuota.watch(dir, LIMIT, kernel(), killed::countDown);
        Thread.sleep(300);
        Path deep = Files.createDirectories(dir.resolve("a/b"));
        Thread.sleep(100);
        Files.write(deep.resolve("fill"), new byte[(int) LIMIT * 2]);
        assertThat(killed.await(5, TimeUnit.SECONDS)).as("killed").isTrue();
        watch.stop();
    }

    @Test
    void anIdleDirectoryIsNotMeasuredOverAndOver() throws Exception {
        Files.writeString(dir.resolve("kept"), "x");
        DirQuota.Watch watch = DirQuota.watch(dir, LIMIT, kernel(), () -> {});
        Thread.sleep(300);
        long first = watch.measurements();
        Thread.sleep(20 * DirQuota.PERIOD_MS);
        assertThat(watch.measurements())
                .as("measurements while nothing changed")
                .isEqualTo(first)
                .isPositive();
        Files.writeString(dir.resolve("kept"), "xy");
        Thread.sleep(10 * DirQuota.PERIOD_MS);
        assertThat(watch.measurements()).as("after a write").isGreaterThan(first);
        watch.stop();
    }

    @Test
    void aDirectoryRenamedAndWatchedAgainStaysWatchedWhenTheFirstWatchStops() throws Exception {
        renamedAndWatchedAgain(false);
    }

    @Test
    void aDirectoryRenamedAndWatchedAgainStaysWatchedWhenTheFirstWatchStopsBeforeTheSecondLooks() throws Exception {
        renamedAndWatchedAgain(true); // as a claim does
    }

    private void renamedAndWatchedAgain(boolean stopFirstAtOnce) throws Exception {
        Process process = kernel();
        CountDownLatch killed = new CountDownLatch(1);
        Path spare = Files.createDirectories(dir.resolve("spare"));
        DirQuota.Watch first = DirQuota.watch(spare, LIMIT, process, () -> {});
        Thread.sleep(200);
        Path session = Files.move(spare, dir.resolve("session"));
        DirQuota.Watch claimed = DirQuota.watch(session, LIMIT, process, killed::countDown);
        if (stopFirstAtOnce) {
            first.stopLater();
            Thread.sleep(200);
        } else {
            Thread.sleep(200);
            first.stop();
        }
        Files.write(session.resolve("fill"), new byte[(int) LIMIT * 2]);
        assertThat(killed.await(5, TimeUnit.SECONDS)).as("killed").isTrue();
        claimed.stop();
    }

    @Test
    void watchingEndsWithTheKernel() throws Exception {
        Process process = kernel();
        DirQuota.Watch watch = DirQuota.watch(dir, LIMIT, process, () -> {});
        Thread.sleep(200);
        process.destroyForcibly().waitFor();
        Thread.sleep(100);
        long before = watch.measurements();
        Files.write(dir.resolve("fill"), new byte[(int) LIMIT * 2]);
        Thread.sleep(10 * DirQuota.PERIOD_MS);
        assertThat(watch.measurements()).isEqualTo(before);
    }
}

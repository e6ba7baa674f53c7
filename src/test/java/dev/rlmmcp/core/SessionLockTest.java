package dev.rlmmcp.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rlmmcp.base.RlmException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SessionLockTest {

    private final SessionLock lock = new SessionLock("s-1");

    @Test
    void aCallIsKnownAsOneUntilItsOutermostUnlock() {
        lock.acquire(Duration.ofSeconds(1));
        lock.acquire(Duration.ofSeconds(1));
        assertThat(lock.callRunning()).isTrue();
        lock.unlock();
        assertThat(lock.callRunning()).isTrue();
        lock.unlock();
        assertThat(lock.callRunning()).isFalse();
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void aSnapshotHoldingTheLockIsNotACall() {
        lock.lock();
        assertThat(lock.callRunning()).isFalse();
        assertThat(lock.isLocked()).isTrue();
        lock.unlock();
    }

    @Test
    void releasingWaitsOutASnapshotBeingWritten() throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        Thread snapshot = Thread.ofPlatform().start(() -> {
            lock.lock();
            held.countDown();
            sleep(300);
            lock.unlock();
        });
        held.await();
        long started = System.nanoTime();
        assertThat(lock.tryLockUnlessCall(Duration.ofSeconds(5))).isTrue();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).isBetween(200L, 4_000L);
        lock.unlock();
        snapshot.join();
    }

    @Test
    void releasingGivesUpAtOnceOnARunningCall() throws Exception {
        Holder call = hold(true);
        long started = System.nanoTime();
        assertThat(lock.tryLockUnlessCall(Duration.ofSeconds(5))).isFalse();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).isLessThan(1_000L);
        call.release();
    }

    @Test
    void releasingGivesUpAfterItsWait() throws Exception {
        Holder snapshot = hold(false);
        assertThat(lock.tryLockUnlessCall(Duration.ofMillis(100))).isFalse();
        snapshot.release();
    }

    @Test
    void aCallThatCannotGetTheLockInItsTimeIsToldWhy() throws Exception {
        Holder other = hold(true);
        assertThatThrownBy(() -> lock.acquire(Duration.ofMillis(50)))
                .isInstanceOf(RlmException.class)
                .hasMessageContaining("busy with another call")
                .hasMessageContaining("did not run");
        other.release();
    }

    @Test
    void everyWayInIsReleasedByClosingWhatItReturns() throws Exception {
        try (var call = lock.call(Duration.ofSeconds(1))) {
            assertThat(lock.callRunning()).isTrue();
            try (var again = lock.call(Duration.ofSeconds(1))) {
                assertThat(lock.getHoldCount()).isEqualTo(2);
            }
            assertThat(lock.callRunning()).as("still the outer call's").isTrue();
        }
        assertThat(lock.isLocked()).isFalse();
        assertThat(lock.callRunning()).isFalse();
        try (var held = lock.hold()) {
            assertThat(lock.callRunning()).isFalse();
        }
        try (var held = lock.tryHold()) {
            assertThat(held).isNotNull();
        }
        try (var held = lock.tryHold(Duration.ofMillis(10))) {
            assertThat(held).isNotNull();
        }
        assertThat(lock.isLocked()).isFalse();
        Holder other = hold(true);
        try (var none = lock.tryHold();
                var late = lock.tryHold(Duration.ofMillis(50));
                var unlessCall = lock.tryHoldUnlessCall(Duration.ofSeconds(5))) {
            assertThat(none).isNull();
            assertThat(late).isNull();
            assertThat(unlessCall).isNull();
        }
        other.release();
        assertThat(lock.isLocked()).isFalse();
    }

    /** The lock, held by another thread (as a call, or as a snapshot writer) until released. */
    private Holder hold(boolean asCall) throws InterruptedException {
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        Thread holder = Thread.ofPlatform().start(() -> {
            if (asCall) {
                lock.acquire(Duration.ofSeconds(1));
            } else {
                lock.lock();
            }
            held.countDown();
            await(done);
            lock.unlock();
        });
        held.await();
        return new Holder(done, holder);
    }

    private record Holder(CountDownLatch done, Thread thread) {
        void release() throws InterruptedException {
            done.countDown();
            thread.join();
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

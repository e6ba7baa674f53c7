package dev.rlmmcp.base;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class CallContextTest {

    @Test
    void cancellingRunsTheRegisteredActionOnce() {
        CallContext context = CallContext.create();
        AtomicInteger runs = new AtomicInteger();
        try (CallContext.Registration registration = context.onCancel(runs::incrementAndGet)) {
            assertThat(context.cancelled()).isFalse();
            context.cancel();
            context.cancel();
            assertThat(runs).hasValue(1);
            assertThat(context.cancelled()).isTrue();
        }
    }

    @Test
    void anActionRegisteredAfterTheCancellationRunsAtOnceAndOneWhoseRegistrationEndedNever() {
        CallContext context = CallContext.create();
        AtomicInteger runs = new AtomicInteger();
        context.onCancel(runs::incrementAndGet).close();
        context.cancel();
        assertThat(runs).hasValue(0);
        context.onCancel(runs::incrementAndGet).close();
        assertThat(runs).hasValue(1);
    }

    @Test
    void closingAnOldRegistrationLeavesTheNewerOneInPlace() {
        CallContext context = CallContext.create();
        AtomicInteger first = new AtomicInteger();
        AtomicInteger second = new AtomicInteger();
        CallContext.Registration old = context.onCancel(first::incrementAndGet);
        try (CallContext.Registration current = context.onCancel(second::incrementAndGet)) {
            old.close();
            context.cancel();
        }
        assertThat(first).hasValue(0);
        assertThat(second).hasValue(1);
    }

    @Test
    void closingWaitsForAnActionUnderWaySoNoneRunsAfter() throws Exception {
        CallContext context = CallContext.create();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean done = new AtomicBoolean();
        CallContext.Registration registration = context.onCancel(() -> {
            running.countDown();
            await(release);
            done.set(true);
        });
        Thread canceller = Thread.ofVirtual().start(context::cancel);
        assertThat(running.await(5, TimeUnit.SECONDS)).isTrue();
        Thread closer = Thread.ofVirtual().start(registration::close);
        Thread.sleep(100);
        assertThat(closer.isAlive()).as("close waits for the running action").isTrue();
        release.countDown();
        closer.join(5000);
        canceller.join(5000);
        assertThat(done).isTrue();
    }

    @Test
    void progressKeepsTheLatestReport() {
        CallContext context = CallContext.create();
        assertThat(context.progress().what()).isNull();
        context.transferred("loading x", 10, 100);
        context.transferred("loading x", 20, 100);
        assertThat(context.progress()).isEqualTo(new CallContext.Progress("loading x", 20, 100));
    }

    @Test
    void noneIsNeverCancelledAndDropsProgress() {
        AtomicInteger runs = new AtomicInteger();
        try (CallContext.Registration registration = CallContext.NONE.onCancel(runs::incrementAndGet)) {
            CallContext.NONE.cancel();
        }
        CallContext.NONE.transferred("loading x", 10, 100);
        assertThat(CallContext.NONE.cancelled()).isFalse();
        assertThat(runs).hasValue(0);
        assertThat(CallContext.NONE.progress().what()).isNull();
    }

    @Test
    void contextsAreIndependent() {
        CallContext one = CallContext.create();
        CallContext two = CallContext.create();
        one.cancel();
        one.transferred("a", 1, 2);
        assertThat(two.cancelled()).isFalse();
        assertThat(two.progress().what()).isNull();
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

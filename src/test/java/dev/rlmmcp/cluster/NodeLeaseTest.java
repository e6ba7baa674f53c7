package dev.rlmmcp.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The lease's timing, on a fake clock: lease 4000 ms, so a heartbeat every 1000 ms and a fence at 3000 ms. */
class NodeLeaseTest {

    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final AtomicBoolean databaseUp = new AtomicBoolean(true);
    /** How long a renewal takes (the clock moves while it is under way). */
    private final AtomicLong renewalMs = new AtomicLong();

    private final AtomicInteger fences = new AtomicInteger();
    private final NodeLease lease = new NodeLease(
            d -> {
                advance(renewalMs.get());
                if (!databaseUp.get()) {
                    throw new IllegalStateException("connection refused");
                }
            },
            fences::incrementAndGet,
            Duration.ofMillis(4000),
            now::get);

    private void advance(long ms) {
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(ms));
    }

    @Test
    void theSafeTimeIsTheLeaseLessAQuarter() {
        assertThat(lease.safeMillis()).isEqualTo(3000);
    }

    @Test
    void aNodeThatRenewsInTimeIsNeverFenced() throws Exception {
        try (NodeLease started =
                new NodeLease(d -> {}, fences::incrementAndGet, Duration.ofMillis(200), System::nanoTime)) {
            started.start();
            Thread.sleep(600);
            assertThat(started.live()).isTrue();
            assertThat(started.serving()).isTrue();
        }
        assertThat(fences).hasValue(0);
    }

    @Test
    void aNodeThatCannotRenewFencesItselfAtLeaseLessMarginFromTheLastSuccessfulSend() {
        startedAtNow();
        databaseUp.set(false);
        for (int i = 0; i < 2; i++) {
            advance(1000);
            lease.renew();
            lease.check();
        }
        assertThat(fences).as("2000 ms after the last renewal was sent").hasValue(0);
        advance(999);
        lease.check();
        assertThat(fences).as("2999 ms").hasValue(0);
        advance(1);
        lease.check();
        assertThat(fences).as("3000 ms: lease 4000 - margin 1000").hasValue(1);
        assertThat(lease.live()).isFalse();
        assertThat(lease.serving()).isFalse();
        lease.check();
        assertThat(fences).as("once").hasValue(1);

        databaseUp.set(true);
        advance(1000);
        lease.renew();
        assertThat(lease.live()).as("renewed again: serving").isTrue();
    }

    @Test
    void theTimeCountsFromWhenTheRenewalWasSentNotWhenItSucceeded() {
        startedAtNow();
        advance(1000);
        renewalMs.set(1500); // sent at 1000, succeeds at 2500
        lease.renew();
        renewalMs.set(0);
        advance(1499); // 3999 ms: 2999 after the send
        lease.check();
        assertThat(fences).hasValue(0);
        advance(1); // 3000 after the send, though only 1500 after it succeeded
        lease.check();
        assertThat(fences).hasValue(1);
    }

    @Test
    void aHangingRenewalDoesNotKeepTheNodeServing() {
        startedAtNow();
        databaseUp.set(false);
        renewalMs.set(3500);
        lease.renew(); // under way from 0 to 3500 ms, then fails
        lease.check();
        assertThat(fences).hasValue(1);
    }

    @Test
    void drainingStopsServingButNotTheLease() {
        startedAtNow();
        lease.drain();
        assertThat(lease.serving()).isFalse();
        assertThat(lease.live()).isTrue();
    }

    @Test
    void aNodeThatCannotReachTheDatabaseDoesNotStart() {
        databaseUp.set(false);
        assertThatThrownBy(lease::start).hasMessageContaining("connection refused");
        lease.close();
    }

    @Test
    void aFirstRenewalThatFailsOnceIsTriedAgainWithinTheLease() {
        AtomicInteger tries = new AtomicInteger();
        try (NodeLease started = new NodeLease(
                d -> {
                    if (tries.incrementAndGet() == 1) {
                        throw new IllegalStateException("Connection attempt timed out");
                    }
                },
                fences::incrementAndGet,
                Duration.ofMillis(2000),
                System::nanoTime)) {
            started.start();
            assertThat(started.live()).isTrue();
        }
        assertThat(tries).hasValue(2);
    }

    /** The first renewal at the current time, as {@link NodeLease#start} makes it. */
    private void startedAtNow() {
        lease.start();
        lease.close(); // the heartbeat's threads stopped: the test drives renew() and check() itself
        assertThat(lease.live()).isTrue();
    }
}

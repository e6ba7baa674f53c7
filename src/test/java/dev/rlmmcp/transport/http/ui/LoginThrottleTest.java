package dev.rlmmcp.transport.http.ui;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LoginThrottleTest {

    private final AtomicLong now = new AtomicLong(1_000_000);
    private final LoginThrottle throttle = new LoginThrottle(3, Duration.ofSeconds(60), now::get);

    @Test
    void anAddressWaitsOutTheWindowAfterTooManyFailures() {
        throttle.failed("10.0.0.1");
        throttle.failed("10.0.0.1");
        assertThat(throttle.retryAfterSeconds("10.0.0.1")).isZero();
        throttle.failed("10.0.0.1");
        assertThat(throttle.retryAfterSeconds("10.0.0.1")).isEqualTo(60);
        assertThat(throttle.retryAfterSeconds("10.0.0.2")).isZero();
        now.addAndGet(59_500);
        assertThat(throttle.retryAfterSeconds("10.0.0.1")).isEqualTo(1);
        now.addAndGet(500);
        assertThat(throttle.retryAfterSeconds("10.0.0.1")).isZero();
        throttle.failed("10.0.0.1");
        assertThat(throttle.retryAfterSeconds("10.0.0.1")).isZero();
    }

    @Test
    void aSuccessClearsTheCount() {
        throttle.failed("10.0.0.1");
        throttle.failed("10.0.0.1");
        throttle.succeeded("10.0.0.1");
        throttle.failed("10.0.0.1");
        throttle.failed("10.0.0.1");
        assertThat(throttle.retryAfterSeconds("10.0.0.1")).isZero();
    }
}

package dev.rlmmcp.kernel.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class KernelHandleTest {

    @Test
    void aPlainProcessIsInterruptedWithSigintAndEndedByNothingOfTheLaunchers() throws Exception {
        KernelHandle kernel = new KernelHandle(new ProcessBuilder("sleep", "30").start());
        try {
            kernel.interrupt();

            assertThat(kernel.waitFor(Duration.ofSeconds(10))).isTrue();
            assertThat(kernel.process().exitValue()).isEqualTo(128 + 2);
            assertThat(kernel.whyEnded()).isNull();
        } finally {
            kernel.kill();
        }
    }

    @Test
    void killEndsItAtOnce() throws Exception {
        KernelHandle kernel = new KernelHandle(new ProcessBuilder("sleep", "30").start());

        kernel.kill();

        assertThat(kernel.waitFor(Duration.ofSeconds(10))).isTrue();
        assertThat(kernel.isAlive()).isFalse();
    }
}

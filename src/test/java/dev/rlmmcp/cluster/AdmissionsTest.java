package dev.rlmmcp.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class AdmissionsTest {

    private final Admissions admissions = new Admissions();

    @Test
    void aSessionIsQuietOnceTheRequestsAdmittedForItHaveEnded() throws Exception {
        Router.Admission running = admissions.admit("s-1");
        Router.Admission other = admissions.admit("s-2");
        admissions.close();
        CompletableFuture<Boolean> quiet =
                CompletableFuture.supplyAsync(() -> admissions.awaitQuiet("s-1", Duration.ofSeconds(5)));
        Thread.sleep(100);
        assertThat(quiet).isNotDone();
        assertThat(admissions.admit("s-1")).isNull();
        assertThat(admissions.admit(null)).isNull();
        running.close();
        assertThat(quiet.get()).isTrue();
        assertThat(admissions.awaitQuiet("s-2", Duration.ofMillis(50))).isFalse();
        other.close();
        assertThat(admissions.awaitQuiet("s-2", Duration.ofMillis(50))).isTrue();
    }

    @Test
    void aRequestThatNamesNoSessionKeepsEverySessionBusy() {
        Router.Admission initialize = admissions.admit(null);
        assertThat(admissions.awaitQuiet("s-3", Duration.ofMillis(100))).isFalse();
        initialize.close();
        assertThat(admissions.awaitQuiet("s-3", Duration.ofMillis(100))).isTrue();
    }
}

package dev.rlmmcp.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class AdmissionsTest {

    private final Admissions admissions = new Admissions();

    @Test
    void aClosedSessionAdmitsNothingAndItsCloseWaitsForWhatWasAdmitted() throws Exception {
        Router.Admission running = admissions.admit("s-1");
        Router.Admission other = admissions.admit("s-2");
        CompletableFuture<Boolean> closing =
                CompletableFuture.supplyAsync(() -> admissions.closeSession("s-1", Duration.ofSeconds(5)));
        Thread.sleep(100);
        assertThat(closing).isNotDone();
        assertThat(admissions.admit("s-1")).isNull();
        assertThat(admissions.admit("s-2")).isNotNull();
        running.close();
        assertThat(closing.get()).isTrue();
        admissions.reopen("s-1");
        assertThat(admissions.admit("s-1")).isNotNull();
        other.close();
    }

    @Test
    void closingAllAdmitsNothingMoreAndGivesUpAfterItsTimeout() {
        Router.Admission stuck = admissions.admit(null);
        assertThat(admissions.closeAll(Duration.ofMillis(100))).isFalse();
        assertThat(admissions.admit(null)).isNull();
        assertThat(admissions.admit("s-3")).isNull();
        stuck.close();
        assertThat(admissions.closeAll(Duration.ofMillis(100))).isTrue();
    }
}

package dev.rlmmcp.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SessionAffinityTest {

    private final List<String> moved = new CopyOnWriteArrayList<>();
    private final CountDownLatch release = new CountDownLatch(1);
    private final SessionAffinity affinity = new SessionAffinity();

    SessionAffinityTest() {
        affinity.start((id, timeout) -> {
            try {
                release.await(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return moved.add(id);
        });
    }

    @Test
    void aSessionForwardedByOneNodeThreeTimesInARowMovesThereAndWaitsMeanwhile() throws Exception {
        affinity.served("s-1", "n-b");
        affinity.served("s-1", "n-b");
        assertThat(affinity.moving("s-1")).isFalse();
        affinity.served("s-1", "n-b");
        assertThat(affinity.moving("s-1")).isTrue();
        release.countDown();
        for (int i = 0; i < 100 && affinity.moving("s-1"); i++) {
            Thread.sleep(20);
        }
        assertThat(affinity.moving("s-1")).isFalse();
        assertThat(moved).containsExactly("s-1");
    }

    @Test
    void roundRobinNeverMovesASession() {
        release.countDown();
        String[] balanced = {"n-b", "n-c", null}; // round robin over three nodes, this one included
        for (int i = 0; i < 30; i++) {
            affinity.served("s-2", balanced[i % 3]);
            affinity.served("s-3", i % 2 == 0 ? "n-b" : null);
        }
        assertThat(affinity.moving("s-2")).isFalse();
        assertThat(affinity.moving("s-3")).isFalse();
        assertThat(moved).isEmpty();
    }

    @Test
    void requestsFromClientsNeverMoveASession() {
        release.countDown();
        for (int i = 0; i < 10; i++) {
            affinity.served("s-4", null);
        }
        assertThat(moved).isEmpty();
    }
}

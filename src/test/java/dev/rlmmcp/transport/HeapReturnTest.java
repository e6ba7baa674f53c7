package dev.rlmmcp.transport;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class HeapReturnTest {

    private static void awaitCollections(int atLeast) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (HeapReturn.collections() < atLeast && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
    }

    @Test
    void aSmallRequestAsksForNothing() throws InterruptedException {
        int before = HeapReturn.collections();
        try (HeapReturn.Scope scope = HeapReturn.handling(HeapReturn.LARGE_BYTES - 1)) {
            assertThat(scope).isSameAs(HeapReturn.Scope.NONE);
        }
        Thread.sleep(500);
        assertThat(HeapReturn.collections()).isEqualTo(before);
    }

    @Test
    void oneCollectionOnceTheLastOfOverlappingLargeRequestsHasEnded() throws InterruptedException {
        int before = HeapReturn.collections();
        HeapReturn.Scope first = HeapReturn.handling(HeapReturn.LARGE_BYTES);
        HeapReturn.Scope second = HeapReturn.handling(64L << 20);
        first.close();
        first.close(); // counted once
        Thread.sleep(500);
        assertThat(HeapReturn.collections())
                .as("a large request is still being handled")
                .isEqualTo(before);
        second.close();
        awaitCollections(before + 1);
        Thread.sleep(300);
        assertThat(HeapReturn.collections()).isEqualTo(before + 1);
    }
}

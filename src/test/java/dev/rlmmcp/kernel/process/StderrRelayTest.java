package dev.rlmmcp.kernel.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class StderrRelayTest {

    private final AtomicLong now = new AtomicLong();
    private final List<String> logged = new ArrayList<>();
    private final StderrRelay relay = new StderrRelay(logged::add, now::get);

    private void write(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        relay.accept(bytes, 0, bytes.length);
    }

    @Test
    void theBucketGivesItsBurstThenItsRate() {
        LogBucket bucket = new LogBucket(3, 2, now::get);
        assertThat(bucket.tryTake()).isTrue();
        assertThat(bucket.tryTake()).isTrue();
        assertThat(bucket.tryTake()).isTrue();
        assertThat(bucket.tryTake()).isFalse();
        now.addAndGet(499_000_000);
        assertThat(bucket.tryTake()).isFalse();
        now.addAndGet(2_000_000);
        assertThat(bucket.tryTake()).isTrue();
        assertThat(bucket.tryTake()).isFalse();
        now.addAndGet(60_000_000_000L); // a long quiet refills only up to the burst
        int taken = 0;
        while (bucket.tryTake()) {
            taken++;
        }
        assertThat(taken).isEqualTo(3);
    }

    @Test
    void linesSplitAcrossReadsAreJoined() {
        write("hel");
        write("lo\nwor");
        write("ld\r\n");
        assertThat(logged).containsExactly("hello", "world");
    }

    @Test
    void aLongLineIsCutAndSaysHowMuch() {
        write("x".repeat(StderrRelay.MAX_LINE_BYTES + 1000) + "\nnext\n");
        assertThat(logged).hasSize(2);
        assertThat(logged.get(0))
                .startsWith("x".repeat(StderrRelay.MAX_LINE_BYTES))
                .endsWith("[1000 more bytes of this line cut]");
        assertThat(logged.get(1)).isEqualTo("next");
    }

    @Test
    void anEndlessLineHoldsNoMoreThanItsCut() throws IOException {
        long total = 300L << 20;
        InputStream endless = new InputStream() {
            long left = total;

            @Override
            public int read() {
                return left-- > 0 ? 'z' : -1;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (left <= 0) {
                    return -1;
                }
                int n = (int) Math.min(len, left);
                java.util.Arrays.fill(b, off, off + n, (byte) 'z');
                left -= n;
                return n;
            }
        };
        relay.relay(endless);
        assertThat(logged).hasSize(1);
        assertThat(logged.get(0))
                .hasSizeLessThan(StderrRelay.MAX_LINE_BYTES + 100)
                .endsWith("[" + (total - StderrRelay.MAX_LINE_BYTES) + " more bytes of this line cut]");
    }

    @Test
    void aFloodIsDroppedAndCountedInOneLine() throws IOException {
        StringBuilder flood = new StringBuilder();
        for (int i = 0; i < 10_000; i++) {
            flood.append("line ").append(i).append('\n');
        }
        write(flood.toString());
        assertThat(logged).hasSize(StderrRelay.BURST_LINES);
        now.addAndGet(1_000_000_000L); // a second later: the rate's worth of lines, the first says what was dropped
        write("after\n");
        assertThat(logged).hasSize(StderrRelay.BURST_LINES + 2);
        assertThat(logged.get(StderrRelay.BURST_LINES))
                .isEqualTo("… " + (10_000 - StderrRelay.BURST_LINES)
                        + " lines dropped (more than 100 lines at once or 10 a second)");
        assertThat(logged.getLast()).isEqualTo("after");
        assertThat(relay.lastWords()).endsWith("line 9999\nafter");
    }

    @Test
    void theEndFlushesAPartialLineAndTheDroppedCount() throws IOException {
        for (int i = 0; i < StderrRelay.BURST_LINES + 5; i++) {
            write("l\n");
        }
        write("no newline");
        relay.relay(new ByteArrayInputStream(new byte[0]));
        assertThat(logged.getLast()).startsWith("… 6 lines dropped");
        assertThat(relay.lastWords()).endsWith("no newline");
    }
}

package dev.rlmmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rlmmcp.base.CallContext;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class ProgressTickerTest {

    private final List<McpSchema.ProgressNotification> sent = new CopyOnWriteArrayList<>();
    private final CallContext context = CallContext.create();

    @Test
    void ticksWithRisingProgressWhileTheCallRunsAndNeverAfter() throws Exception {
        String answer = ProgressTicker.whileRunning("tok", sent::add, Duration.ofMillis(50), context, () -> {
            sleep(400);
            return "done";
        });
        int atReturn = sent.size();
        assertThat(answer).isEqualTo("done");
        assertThat(atReturn).isGreaterThanOrEqualTo(3);
        assertThat(sent).allSatisfy(p -> {
            assertThat(p.progressToken()).isEqualTo("tok");
            assertThat(p.message()).matches("running \\d+ s");
        });
        for (int i = 1; i < sent.size(); i++) {
            assertThat(sent.get(i).progress()).isGreaterThan(sent.get(i - 1).progress());
        }
        Thread.sleep(200);
        assertThat(sent).hasSize(atReturn);
    }

    @Test
    void aTransferReportsBytesOfItsTotalAndProgressKeepsRising() {
        ProgressTicker.whileRunning("tok", sent::add, Duration.ofMillis(40), context, () -> {
            sleep(130);
            context.transferred("loading s3://b/k", 1024 * 1024, 4 * 1024 * 1024);
            sleep(130);
            return null;
        });
        McpSchema.ProgressNotification lastOne = sent.getLast();
        assertThat(lastOne.message()).matches("loading s3://b/k: 1\\.0 MB of 4\\.0 MB, \\d+ s");
        assertThat(lastOne.total()).isEqualTo(4.0 * 1024 * 1024);
        for (int i = 1; i < sent.size(); i++) {
            assertThat(sent.get(i).progress()).isGreaterThan(sent.get(i - 1).progress());
        }
    }

    @Test
    void aStatusLineReportedAfterATransferIsWhatTheNotificationsSayFromThenOn() {
        ProgressTicker.whileRunning("tok", sent::add, Duration.ofMillis(40), context, () -> {
            context.transferred("loading s3://b/k", 1024, 4096);
            sleep(130);
            context.status("iteration 2, depth 1, 3 children running");
            sleep(130);
            return null;
        });
        assertThat(sent.getFirst().message()).startsWith("loading s3://b/k");
        assertThat(sent.getLast().message()).matches("iteration 2, depth 1, 3 children running, \\d+ s");
        for (int i = 1; i < sent.size(); i++) {
            assertThat(sent.get(i).progress()).isGreaterThan(sent.get(i - 1).progress());
        }
    }

    @Test
    void aContextThatNobodyWaitsOnShowsOnlyTheTimeRunning() {
        ProgressTicker.whileRunning("tok", sent::add, Duration.ofMillis(40), CallContext.NONE, () -> {
            CallContext.NONE.transferred("loading s3://b/k", 1024, 4096);
            sleep(130);
            return null;
        });
        assertThat(sent).isNotEmpty().allSatisfy(p -> assertThat(p.message()).matches("running \\d+ s"));
    }

    @Test
    void sendsNothingWithoutAProgressToken() throws Exception {
        ProgressTicker.whileRunning(null, sent::add, Duration.ofMillis(10), context, () -> sleep(100));
        assertThat(sent).isEmpty();
    }

    @Test
    void aFailingSendDoesNotFailTheCall() {
        String answer = ProgressTicker.whileRunning(
                "tok",
                p -> {
                    throw new IllegalStateException("client gone");
                },
                Duration.ofMillis(20),
                context,
                () -> {
                    sleep(100);
                    return "done";
                });
        assertThat(answer).isEqualTo("done");
    }

    private static Void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return null;
    }
}

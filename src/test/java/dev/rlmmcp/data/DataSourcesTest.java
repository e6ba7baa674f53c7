package dev.rlmmcp.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class DataSourcesTest {

    private static DataSources capAt(long bytes) {
        Duration t = Duration.ofSeconds(5);
        return new DataSources(
                new S3Store(S3Settings.notConfigured("b"), t, t),
                new UrlFetcher(UrlPolicy.publicOnly(), t, t, 5),
                bytes);
    }

    @Test
    void aDeclaredSizeOverTheCapIsRefusedAndTheDownloadClosed() {
        AtomicBoolean closed = new AtomicBoolean();
        InputStream body = new ByteArrayInputStream(new byte[10]) {
            @Override
            public void close() {
                closed.set(true);
            }
        };
        assertThatThrownBy(() -> capAt(5).capped(new Download(body, 10, "s3://b/k", null), "key"))
                .isInstanceOfSatisfying(RlmException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.TOO_LARGE);
                    assertThat(e.argument()).isEqualTo("key");
                    assertThat(e.fix()).contains("--max-transfer-mb");
                });
        assertThat(closed).isTrue();
    }

    @Test
    void anUndeclaredStreamIsCutOneByteOverTheCap() throws Exception {
        Download capped = capAt(5).capped(new Download(new ByteArrayInputStream(new byte[5]), -1, "u", null), "url");
        assertThat(capped.body().readAllBytes()).hasSize(5);
        Download over = capAt(5).capped(new Download(new ByteArrayInputStream(new byte[6]), -1, "u", null), "url");
        assertThatThrownBy(() -> over.body().readAllBytes())
                .isInstanceOfSatisfying(
                        TransferException.class,
                        e -> assertThat(e.refusal().code()).isEqualTo(ErrorCode.TOO_LARGE));
    }

    @Test
    void zeroMeansNoCap() throws Exception {
        Download d = capAt(0).capped(new Download(new ByteArrayInputStream(new byte[100]), 100, "u", null), "url");
        assertThat(d.body().readAllBytes()).hasSize(100);
    }
}

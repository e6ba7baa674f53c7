package dev.rlmmcp.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ClusterSettingsTest {

    @Test
    void neitherTheSecretNorTheDatabasePasswordIsPrinted() {
        ClusterSettings settings = new ClusterSettings(
                "postgresql://rlm:hunter2@db:5432/rlm?sslmode=disable&password=other",
                "10.0.0.5:9000",
                "s3cr3t-value",
                Duration.ofSeconds(4));
        assertThat(settings.toString())
                .doesNotContain("hunter2", "other", "s3cr3t-value")
                .contains("postgresql://rlm:***@db:5432/rlm", "10.0.0.5:9000");
        assertThat(ClusterSettings.masked("jdbc:postgresql://db/rlm?user=a&password=b"))
                .doesNotContain("=b");
    }

    @Test
    void theNodeAddressIsHostAndPort() {
        ClusterSettings settings = new ClusterSettings("postgresql://db/rlm", "[::1]:9000", "s", Duration.ofSeconds(4));
        assertThat(settings.peerHost()).isEqualTo("::1");
        assertThat(settings.peerPort()).isEqualTo(9000);
        assertThat(ClusterSettings.checkAddress("10.0.0.5:9000")).isNull();
        assertThat(ClusterSettings.checkAddress("10.0.0.5")).contains("not host:port");
        assertThat(ClusterSettings.checkAddress("host:x")).contains("no numeric port");
        assertThat(ClusterSettings.checkAddress("host:0")).contains("1..65535");
    }
}

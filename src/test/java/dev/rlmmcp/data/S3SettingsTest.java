package dev.rlmmcp.data;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.util.Map;
import org.junit.jupiter.api.Test;

class S3SettingsTest {

    @Test
    void nothingSetMeansNotConfigured() {
        S3Settings s = S3Settings.fromEnv(Map.of(), "claude-code");
        assertThat(s.configured()).isFalse();
        assertThat(s.named()).as("the S3 tools are not offered").isFalse();
        assertThat(s.defaultBucket()).isEqualTo("claude-code");
    }

    @Test
    void aMinioEndpointAsHostAndPortTakesItsSchemeFromMinioSecure() {
        Map<String, String> env =
                Map.of("MINIO_ENDPOINT", "minio.lan:9000", "MINIO_ACCESS_KEY", "a", "MINIO_SECRET_KEY", "b");
        assertThat(S3Settings.fromEnv(env, "x").endpoint()).isEqualTo(URI.create("http://minio.lan:9000"));
        Map<String, String> secure = new java.util.HashMap<>(env);
        secure.put("MINIO_SECURE", "true");
        S3Settings s = S3Settings.fromEnv(secure, "x");
        assertThat(s.endpoint()).isEqualTo(URI.create("https://minio.lan:9000"));
        assertThat(s.configured()).isTrue();
        assertThat(s.region()).isEqualTo("us-east-1");
        assertThat(s.awsChain()).isFalse();
    }

    @Test
    void aUrlEndpointKeepsItsScheme() {
        S3Settings s = S3Settings.fromEnv(
                Map.of(
                        "MINIO_ENDPOINT",
                        "http://127.0.0.1:9000",
                        "MINIO_SECURE",
                        "true",
                        "MINIO_ACCESS_KEY",
                        "a",
                        "MINIO_SECRET_KEY",
                        "b"),
                "x");
        assertThat(s.endpoint()).isEqualTo(URI.create("http://127.0.0.1:9000"));
    }

    @Test
    void anEndpointWithoutKeysSaysWhichAreMissing() {
        S3Settings s = S3Settings.fromEnv(Map.of("MINIO_ENDPOINT", "127.0.0.1:9000"), "x");
        assertThat(s.configured()).isFalse();
        assertThat(s.missing()).contains("MINIO_ACCESS_KEY").contains("MINIO_SECRET_KEY");
        assertThat(s.named()).as("offered, to say what is missing").isTrue();
    }

    @Test
    void awsVariablesUseTheStandardChain() {
        S3Settings s = S3Settings.fromEnv(Map.of("AWS_PROFILE", "dev", "AWS_REGION", "eu-west-1"), "x");
        assertThat(s.configured()).isTrue();
        assertThat(s.named()).isTrue();
        assertThat(s.awsChain()).isTrue();
        assertThat(s.region()).isEqualTo("eu-west-1");
        assertThat(s.endpoint()).isNull();
    }

    @Test
    void theSecretNeverShows() {
        S3Settings s = S3Settings.fromEnv(
                Map.of("MINIO_ENDPOINT", "h:1", "MINIO_ACCESS_KEY", "a", "MINIO_SECRET_KEY", "very-secret-value"), "x");
        assertThat(s.toString()).doesNotContain("very-secret-value");
    }
}

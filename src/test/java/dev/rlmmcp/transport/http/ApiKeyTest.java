package dev.rlmmcp.transport.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ApiKeyTest {

    @Test
    void blankOrMissingMeansNoKey() {
        assertThat(ApiKey.of(null)).isNull();
        assertThat(ApiKey.of("  ")).isNull();
    }

    @Test
    void matchesOnlyTheExactKey() {
        ApiKey key = ApiKey.of("s3cret-key");
        assertThat(key.matches("s3cret-key")).isTrue();
        assertThat(key.matches("s3cret-kez")).isFalse();
        assertThat(key.matches("s3cret-key ")).isFalse();
        assertThat(key.matches("s3cret")).isFalse();
        assertThat(key.matches("")).isFalse();
        assertThat(key.matches(null)).isFalse();
    }

    @Test
    void surroundingWhitespaceInTheEnvironmentIsIgnored() {
        assertThat(ApiKey.of(" k1 \n").matches("k1")).isTrue();
    }

    @Test
    void neverPrintsTheKey() {
        assertThat(ApiKey.of("s3cret-key").toString()).doesNotContain("s3cret");
    }
}

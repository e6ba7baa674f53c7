package dev.rlmmcp.transport.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class AccessLogTest {

    @Test
    void accessLogPathsAreAlwaysValidJsonStrings() {
        assertThat(AccessLog.safe("/mcp")).isEqualTo("/mcp");
        assertThat(AccessLog.safe("/a\"b\\c\n")).isEqualTo("/a?b?c?");
        assertThat(AccessLog.safe(null)).isEmpty();
    }
}

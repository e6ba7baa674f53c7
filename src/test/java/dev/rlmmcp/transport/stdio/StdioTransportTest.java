package dev.rlmmcp.transport.stdio;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class StdioTransportTest {

    @Test
    void newlinesAreFoundInAnyPositionOfTheEightByteWords() {
        for (int at = 0; at < 20; at++) {
            byte[] bytes = "x".repeat(20).getBytes(StandardCharsets.US_ASCII);
            bytes[at] = '\n';
            assertThat(StdioTransport.indexOf(bytes, 0, bytes.length, (byte) '\n')).isEqualTo(at);
            assertThat(StdioTransport.indexOf(bytes, at + 1, bytes.length, (byte) '\n')).isEqualTo(-1);
            assertThat(StdioTransport.indexOf(bytes, 0, at, (byte) '\n')).isEqualTo(-1);
        }
    }
}

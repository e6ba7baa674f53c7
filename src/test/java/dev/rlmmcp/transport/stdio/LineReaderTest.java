package dev.rlmmcp.transport.stdio;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class LineReaderTest {

    @Test
    void newlinesAreFoundInAnyPositionOfTheEightByteWords() {
        for (int at = 0; at < 20; at++) {
            byte[] bytes = "x".repeat(20).getBytes(StandardCharsets.US_ASCII);
            bytes[at] = '\n';
            assertThat(LineReader.indexOf(bytes, 0, bytes.length, (byte) '\n')).isEqualTo(at);
            assertThat(LineReader.indexOf(bytes, at + 1, bytes.length, (byte) '\n')).isEqualTo(-1);
            assertThat(LineReader.indexOf(bytes, 0, at, (byte) '\n')).isEqualTo(-1);
        }
    }
}

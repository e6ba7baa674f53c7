package dev.rlmmcp.transport.stdio;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LineReaderTest {

    @Test
    void newlinesAreFoundInAnyPositionOfTheEightByteWords() {
        for (int at = 0; at < 20; at++) {
            byte[] bytes = "x".repeat(20).getBytes(StandardCharsets.US_ASCII);
            bytes[at] = '\n';
            assertThat(LineReader.indexOf(bytes, 0, bytes.length, (byte) '\n')).isEqualTo(at);
            assertThat(LineReader.indexOf(bytes, at + 1, bytes.length, (byte) '\n'))
                    .isEqualTo(-1);
            assertThat(LineReader.indexOf(bytes, 0, at, (byte) '\n')).isEqualTo(-1);
        }
    }

    /**
     * Every line over the limit is refused, whatever the reads' sizes: also one whose newline arrives in
     * the read that carries it past the limit (a 1.5 MiB line against a 1 MiB limit, read in 64 KiB chunks
     * or in one piece).
     */
    @Test
    void aLineOverTheLimitIsRefusedWhereverItsNewlineFalls() throws IOException {
        int limit = 1 << 20;
        for (int over : new int[] {1, 1 << 16, limit / 2}) {
            String big = "x".repeat(limit + over);
            byte[] input = ("{\"a\":1}\n" + big + "\n{\"b\":2}\n").getBytes(StandardCharsets.US_ASCII);
            List<String> refused = new ArrayList<>();
            LineReader reader = new LineReader(new ByteArrayInputStream(input), limit, () -> false, refused::add);
            List<String> lines = new ArrayList<>();
            for (LineReader.Line line; (line = reader.next()) != null; ) {
                lines.add(new String(line.bytes(), line.offset(), line.length(), StandardCharsets.US_ASCII));
            }
            assertThat(lines).as("%d bytes over", over).containsExactly("{\"a\":1}", "{\"b\":2}");
            assertThat(refused)
                    .as("%d bytes over", over)
                    .singleElement()
                    .asString()
                    .contains("--max-request-mb");
        }
    }

    @Test
    void aLineAtTheLimitIsRead() throws IOException {
        int limit = 1 << 20;
        byte[] input = ("y".repeat(limit) + "\n").getBytes(StandardCharsets.US_ASCII);
        List<String> refused = new ArrayList<>();
        LineReader.Line line = new LineReader(new ByteArrayInputStream(input), limit, () -> false, refused::add).next();
        assertThat(line.length()).isEqualTo(limit);
        assertThat(refused).isEmpty();
    }
}

package dev.rlmmcp.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ProgressLineTest {

    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);

    private String written() {
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void onATerminalTheLineIsRedrawnInPlaceAndALogLineTakesItAwayFirst() {
        ProgressLine line = new ProgressLine(out, true);
        line.show("iteration 1, depth 0");
        line.show("iteration 12, depth 1");
        line.show("iteration 2, depth 0");
        line.others().print("WARN something\n");
        line.show("iteration 2, depth 0");
        line.clear();
        assertThat(written())
                .isEqualTo("\rrlm-mcp ask: iteration 1, depth 0"
                        + "\rrlm-mcp ask: iteration 12, depth 1"
                        + "\rrlm-mcp ask: iteration 2, depth 0 "
                        + "\r" + " ".repeat(33) + "\rWARN something\n"
                        + "\rrlm-mcp ask: iteration 2, depth 0"
                        + "\r" + " ".repeat(33) + "\r");
    }

    @Test
    void elsewhereEachChangeIsAPlainLine() {
        ProgressLine line = new ProgressLine(out, false);
        line.show("iteration 1, depth 0");
        line.show("iteration 1, depth 0");
        line.show("iteration 2, depth 0");
        line.others().print("WARN something\n");
        line.clear();
        assertThat(written())
                .isEqualTo(
                        "rlm-mcp ask: iteration 1, depth 0\nrlm-mcp ask: iteration 2, depth 0\n" + "WARN something\n");
    }
}

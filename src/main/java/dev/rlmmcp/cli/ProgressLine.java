package dev.rlmmcp.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A live progress line for a person at a terminal: redrawn in place with a carriage return when the
 * stream is a terminal, else one plain line per change (a log file or a pipe gets no control characters).
 */
final class ProgressLine {

    private static final String PREFIX = "rlm-mcp ask: ";

    private final PrintStream out;
    private final boolean terminal;
    private String last;
    private int width;

    ProgressLine(PrintStream out, boolean terminal) {
        this.out = out;
        this.terminal = terminal;
    }

    /** Whether this process's stderr is a terminal (Linux: where /proc/self/fd/2 points). */
    static boolean stderrIsTerminal() {
        try {
            String target = Files.readSymbolicLink(Path.of("/proc/self/fd/2")).toString();
            return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
        } catch (Exception e) {
            return false;
        }
    }

    synchronized void show(String line) {
        if (line.equals(last)) {
            return;
        }
        last = line;
        if (terminal) {
            String shown = PREFIX + line;
            out.print("\r" + shown + " ".repeat(Math.max(0, width - shown.length())));
            width = shown.length();
        } else {
            out.println(PREFIX + line);
        }
        out.flush();
    }

    /** Takes the line away on a terminal, so that what follows starts on a clean line. */
    synchronized void clear() {
        if (terminal && width > 0) {
            out.print("\r" + " ".repeat(width) + "\r");
            out.flush();
            width = 0;
        }
        last = null;
    }

    /**
     * A stream for everything else written to the terminal (the log's warnings): each write first takes
     * the progress line away, and the next {@link #show} draws it again below what was written.
     */
    PrintStream others() {
        return new PrintStream(
                new OutputStream() {
                    @Override
                    public void write(int b) throws IOException {
                        write(new byte[] {(byte) b}, 0, 1);
                    }

                    @Override
                    public void write(byte[] b, int off, int len) {
                        synchronized (ProgressLine.this) {
                            clear();
                            out.write(b, off, len);
                        }
                    }

                    @Override
                    public void flush() {
                        out.flush();
                    }
                },
                true,
                StandardCharsets.UTF_8);
    }
}

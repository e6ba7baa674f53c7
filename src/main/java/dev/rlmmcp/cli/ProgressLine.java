package dev.rlmmcp.cli;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A live progress line for a person at a terminal: redrawn in place with a carriage return when the
 * stream is a terminal, else one plain line per change (a log file or a pipe gets no control characters).
 */
final class ProgressLine {

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
            String shown = "rlm-mcp ask: " + line;
            out.print("\r" + shown + " ".repeat(Math.max(0, width - shown.length())));
            width = shown.length();
        } else {
            out.println("rlm-mcp ask: " + line);
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
}

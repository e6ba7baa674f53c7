package dev.rlmmcp.kernel.process;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Relays a kernel's stderr to the server log without trusting it: read in bounded chunks (never a
 * readLine on unbounded input), each line cut at {@link #MAX_LINE_BYTES}, and lines logged through a
 * token bucket (a burst of {@link #BURST_LINES}, then {@link #LINES_PER_SECOND} a second); what the
 * bucket refuses is counted and told in one "N lines dropped" line. The last lines, logged or not,
 * are kept as the kernel's last words for a crash report.
 */
final class StderrRelay {

    static final int MAX_LINE_BYTES = 4096;
    static final int BURST_LINES = 100;
    static final double LINES_PER_SECOND = 10;
    private static final int LAST_WORDS_LINES = 20;

    private final Consumer<String> log;
    private final LogBucket bucket;
    private final Deque<String> lastWords = new ArrayDeque<>();
    private final ByteArrayOutputStream line = new ByteArrayOutputStream(256);
    private long cut;
    private long dropped;

    StderrRelay(Consumer<String> log, LongSupplier nanoClock) {
        this.log = log;
        this.bucket = new LogBucket(BURST_LINES, LINES_PER_SECOND, nanoClock);
    }

    /** Reads {@code in} to its end. */
    void relay(InputStream in) throws IOException {
        byte[] buffer = new byte[8192];
        try {
            int n;
            while ((n = in.read(buffer)) > 0) {
                accept(buffer, 0, n);
            }
        } finally {
            end();
        }
    }

    void accept(byte[] bytes, int offset, int length) {
        int start = offset;
        int stop = offset + length;
        for (int i = offset; i < stop; i++) {
            if (bytes[i] == '\n') {
                append(bytes, start, i - start);
                emit();
                start = i + 1;
            }
        }
        append(bytes, start, stop - start);
    }

    private void append(byte[] bytes, int offset, int length) {
        int room = Math.max(0, MAX_LINE_BYTES - line.size());
        int kept = Math.min(room, length);
        line.write(bytes, offset, kept);
        cut += length - kept;
    }

    private void emit() {
        String text = line.toString(StandardCharsets.UTF_8);
        if (text.endsWith("\r")) {
            text = text.substring(0, text.length() - 1);
        }
        if (cut > 0) {
            text += " … [" + cut + " more bytes of this line cut]";
        }
        line.reset();
        cut = 0;
        synchronized (lastWords) {
            lastWords.addLast(text);
            if (lastWords.size() > LAST_WORDS_LINES) {
                lastWords.removeFirst();
            }
        }
        if (bucket.tryTake()) {
            flushDropped();
            log.accept(text);
        } else {
            dropped++;
        }
    }

    /** The stream ended: a last line without its newline, and the count of lines dropped. */
    void end() {
        if (line.size() > 0 || cut > 0) {
            emit();
        }
        flushDropped();
    }

    private void flushDropped() {
        if (dropped > 0) {
            log.accept("… " + dropped + " lines dropped (more than " + BURST_LINES + " lines at once or "
                    + (int) LINES_PER_SECOND + " a second)");
            dropped = 0;
        }
    }

    /** The last lines the kernel wrote, each cut as logged. */
    String lastWords() {
        synchronized (lastWords) {
            return String.join("\n", lastWords);
        }
    }
}

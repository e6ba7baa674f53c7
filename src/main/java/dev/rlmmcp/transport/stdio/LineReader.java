package dev.rlmmcp.transport.stdio;

import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The framing of stdio: one message per line, read straight into a buffer that is handed over with the
 * line instead of copied when the line is long. A line longer than the limit is skipped to its end and
 * reported instead of read, so an oversize message costs no memory.
 */
final class LineReader {

    private static final int BUFFER_SIZE = 1 << 16;
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final InputStream in;
    private final int maxMessageBytes;
    private final BooleanSupplier closing;
    private final Consumer<String> tooLarge;
    private byte[] buffer = new byte[BUFFER_SIZE];
    private int position;
    private int limit;

    /** {@code tooLarge} hears why a line was skipped; {@code closing} stops the reading. */
    LineReader(InputStream in, int maxMessageBytes, BooleanSupplier closing, Consumer<String> tooLarge) {
        this.in = in;
        this.maxMessageBytes = maxMessageBytes;
        this.closing = closing;
        this.tooLarge = tooLarge;
    }

    /** One message: bytes[offset, offset + length). */
    record Line(byte[] bytes, int offset, int length) {}

    /**
     * The next non-empty line, or null at end of input (or once closing). One thread at a time calls this
     * (on stdio, the current leader; the hand-off through its executor orders one leader's reads before the
     * next one's). A line is read
     * straight into the buffer, which grows for a long line and is then handed over whole.
     */
    Line next() throws IOException {
        boolean oversize = false;
        int scanned = position;
        while (!closing.getAsBoolean()) {
            int newline = indexOf(buffer, scanned, limit, (byte) '\n');
            if (newline >= 0) {
                int start = position;
                position = scanned = newline + 1;
                // a line whose newline came in the read that carried it past the limit is oversize too
                if (oversize || newline - start > maxMessageBytes) {
                    tooLarge.accept("message larger than the limit of " + maxMessageBytes
                            + " bytes (raise --max-request-mb / RLM_MAX_REQUEST_MB)");
                    oversize = false;
                } else if (!isBlank(buffer, start, newline)) {
                    return take(start, newline);
                }
                continue;
            }
            if (oversize || limit - position > maxMessageBytes) {
                oversize = true;
                position = limit = 0;
            } else if (limit == buffer.length) {
                makeRoom();
            }
            scanned = limit;
            int n = in.read(buffer, limit, buffer.length - limit);
            if (n < 0) {
                return null;
            }
            limit += n;
        }
        return null;
    }

    /** Moves the unread bytes to the front, and doubles the buffer if they fill it. */
    private void makeRoom() {
        if (position > 0) {
            System.arraycopy(buffer, position, buffer, 0, limit - position);
            limit -= position;
            position = 0;
        }
        if (limit == buffer.length) {
            buffer = Arrays.copyOf(buffer, buffer.length * 2);
        }
    }

    /** The line [start, end) as a message: copied out of a buffer of the usual size, else the buffer itself. */
    private Line take(int start, int end) {
        if (buffer.length == BUFFER_SIZE) {
            return new Line(Arrays.copyOfRange(buffer, start, end), 0, end - start);
        }
        Line line = new Line(buffer, start, end - start);
        byte[] rest = new byte[Math.max(BUFFER_SIZE, limit - position)];
        System.arraycopy(buffer, position, rest, 0, limit - position);
        buffer = rest;
        limit -= position;
        position = 0;
        return line;
    }

    /** Index of {@code b} in a[from, to), or -1; eight bytes at a time. */
    static int indexOf(byte[] a, int from, int to, byte b) {
        long pattern = 0x0101010101010101L * (b & 0xFF);
        int i = from;
        for (; i + Long.BYTES <= to; i += Long.BYTES) {
            long x = (long) LONGS.get(a, i) ^ pattern;
            if (((x - 0x0101010101010101L) & ~x & 0x8080808080808080L) != 0) {
                break;
            }
        }
        for (; i < to; i++) {
            if (a[i] == b) {
                return i;
            }
        }
        return -1;
    }

    private static boolean isBlank(byte[] bytes, int from, int to) {
        for (int i = from; i < to; i++) {
            byte b = bytes[i];
            if (b != ' ' && b != '\t' && b != '\r') {
                return false;
            }
        }
        return true;
    }
}

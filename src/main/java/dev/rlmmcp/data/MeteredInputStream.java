package dev.rlmmcp.data;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.function.LongConsumer;

/** Tells {@code onTotal} how many bytes have been read so far, after every read that returned some. */
public final class MeteredInputStream extends FilterInputStream {

    private final LongConsumer onTotal;
    private long total;

    public MeteredInputStream(InputStream in, LongConsumer onTotal) {
        super(in);
        this.onTotal = onTotal;
    }

    @Override
    public int read() throws IOException {
        int b = super.read();
        if (b >= 0) {
            onTotal.accept(++total);
        }
        return b;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
        int n = super.read(buffer, offset, length);
        if (n > 0) {
            total += n;
            onTotal.accept(total);
        }
        return n;
    }

    @Override
    public long skip(long n) throws IOException {
        throw new IOException("skip is not supported");
    }

    public long total() {
        return total;
    }
}

package dev.rlmmcp.data;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.function.LongFunction;

/** Passes at most {@code cap} bytes; one byte more fails the read with the caller's refusal. */
public final class CappedInputStream extends FilterInputStream {

    private final long cap;
    private final LongFunction<TransferException> overCap;
    private long count;

    public CappedInputStream(InputStream in, long cap, LongFunction<TransferException> overCap) {
        super(in);
        this.cap = cap;
        this.overCap = overCap;
    }

    @Override
    public int read() throws IOException {
        int b = super.read();
        if (b >= 0) {
            counted(1);
        }
        return b;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
        int n = super.read(buffer, offset, (int) Math.min(length, Math.max(1, cap - count + 1)));
        if (n > 0) {
            counted(n);
        }
        return n;
    }

    @Override
    public long skip(long n) throws IOException {
        throw new IOException("skip is not supported");
    }

    @Override
    public boolean markSupported() {
        return false;
    }

    public long count() {
        return count;
    }

    private void counted(int n) throws TransferException {
        count += n;
        if (count > cap) {
            throw overCap.apply(cap);
        }
    }
}

package dev.rlmmcp.kernel.channel;

import java.io.IOException;

/** A streamed payload was cut short because its source failed (or the call stopped); the kernel is fine. */
public final class TransferAbortedException extends Exception {

    public TransferAbortedException(IOException cause) {
        super(cause.getMessage(), cause);
    }

    @Override
    public synchronized IOException getCause() {
        return (IOException) super.getCause();
    }
}

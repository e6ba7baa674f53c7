package dev.rlmmcp.data;

import java.io.IOException;
import java.io.InputStream;

/**
 * An open source of bytes: the body, its declared size (-1 when the source does not say), and how it
 * is shown to the agent (s3://bucket/key, or the URL finally reached after redirects).
 */
public record Download(InputStream body, long size, String shown, String contentType) implements AutoCloseable {

    /** Releases the connection; a failure to close it changes nothing for the caller, so it is not reported. */
    @Override
    public void close() {
        try {
            body.close();
        } catch (IOException | RuntimeException ignored) {
            // the transfer is over either way
        }
    }
}

package dev.rlmmcp.core.data;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * An open source of bytes: the body, its declared size (-1 when the source does not say), and how it
 * is shown to the agent (s3://bucket/key, or the URL finally reached after redirects).
 */
public record Download(InputStream body, long size, String shown, String contentType) implements AutoCloseable {

    @Override
    public void close() {
        try {
            body.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

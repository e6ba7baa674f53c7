package dev.rlmmcp.transport.peer;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;

/**
 * The body of a peer's answer on a keep-alive connection ({@link PeerConnections}): read to its end, the
 * connection goes back to the pool; closed before that, the connection is closed (what is left of the body
 * would be read as the next answer).
 */
abstract sealed class BodyStream extends InputStream {

    protected final InputStream in;
    private final PeerConnections.Connection connection;
    private final boolean keep;
    private boolean done;

    BodyStream(InputStream in, PeerConnections.Connection connection, boolean keep) {
        this.in = in;
        this.connection = connection;
        this.keep = keep;
    }

    /** The body ended where it should: the connection may serve another request. */
    protected final void ended(boolean cleanly) {
        if (!done) {
            done = true;
            if (cleanly) {
                connection.finished(keep);
            } else {
                connection.close();
            }
        }
    }

    protected final boolean done() {
        return done;
    }

    @Override
    public final int read() throws IOException {
        byte[] one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public final void close() {
        ended(false);
    }

    /** A body of known length, or (length -1) one that ends when the peer closes the connection. */
    static final class Sized extends BodyStream {

        private long left;

        Sized(InputStream in, long length, PeerConnections.Connection connection, boolean keep) {
            super(in, connection, keep);
            this.left = length;
            if (length == 0) {
                ended(true);
            }
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (done() || len == 0) {
                return done() ? -1 : 0;
            }
            int n = in.read(b, off, left < 0 ? len : (int) Math.min(len, left));
            if (n < 0) {
                ended(left < 0);
                if (left > 0) {
                    throw new EOFException("the peer's answer ended " + left + " bytes early");
                }
                return -1;
            }
            if (left > 0 && (left -= n) == 0) {
                ended(true);
            }
            return n;
        }

        @Override
        public int available() throws IOException {
            return done() ? 0 : (int) Math.min(in.available(), left < 0 ? Integer.MAX_VALUE : left);
        }
    }

    /** A chunked body (an event stream, or an answer whose length was not known when it began). */
    static final class Chunked extends BodyStream {

        private long chunk;
        private boolean afterChunk;

        Chunked(InputStream in, PeerConnections.Connection connection, boolean keep) {
            super(in, connection, keep);
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (done()) {
                return -1;
            }
            if (len == 0) {
                return 0;
            }
            if (chunk == 0 && !nextChunk()) {
                return -1;
            }
            int n = in.read(b, off, (int) Math.min(len, chunk));
            if (n < 0) {
                ended(false);
                throw new EOFException("the peer's answer ended inside a chunk");
            }
            chunk -= n;
            return n;
        }

        /** Reads the next chunk's size; false at the last chunk (its trailers read). */
        private boolean nextChunk() throws IOException {
            if (afterChunk) {
                line(); // the CRLF that ends the previous chunk's data: read only now, as a sender may send it
                // with the next chunk (Jetty does), and waiting for it would hold back the data already read
            }
            afterChunk = true;
            String size = line();
            int extension = size.indexOf(';');
            chunk = Long.parseLong((extension < 0 ? size : size.substring(0, extension)).strip(), 16);
            if (chunk == 0) {
                for (String trailer = line(); !trailer.isEmpty(); trailer = line()) {
                    // trailers are not passed on
                }
                ended(true);
                return false;
            }
            return true;
        }

        @Override
        public int available() throws IOException {
            return done() || chunk == 0 ? 0 : (int) Math.min(in.available(), chunk);
        }

        private String line() throws IOException {
            StringBuilder line = new StringBuilder(16);
            for (int c = in.read(); c != '\n'; c = in.read()) {
                if (c < 0) {
                    ended(false);
                    throw new EOFException("the peer's answer ended inside a chunk's framing");
                }
                if (c != '\r') {
                    line.append((char) c);
                }
            }
            return line.toString();
        }
    }
}

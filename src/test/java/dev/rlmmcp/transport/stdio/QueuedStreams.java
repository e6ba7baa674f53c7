package dev.rlmmcp.transport.stdio;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;

/** A stdio server's stdin and stdout in a test: queues, with none of a pipe's ties to the threads that use it. */
final class QueuedStreams {

    private QueuedStreams() {}

    /** Stdin: chunks from a queue; an empty one is the end. */
    static final class Feed extends InputStream {

        private final BlockingQueue<byte[]> chunks;
        private byte[] chunk = new byte[0];
        private int position;
        private boolean ended;

        Feed(BlockingQueue<byte[]> chunks) {
            this.chunks = chunks;
        }

        @Override
        public int read() {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            while (!ended && position == chunk.length) {
                try {
                    chunk = chunks.take();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return -1;
                }
                position = 0;
                ended = chunk.length == 0;
            }
            if (ended) {
                return -1;
            }
            int n = Math.min(len, chunk.length - position);
            System.arraycopy(chunk, position, b, off, n);
            position += n;
            return n;
        }
    }

    /** Stdout: each line to a queue. */
    static final class Lines extends OutputStream {

        private final BlockingQueue<String> lines;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();

        Lines(BlockingQueue<String> lines) {
            this.lines = lines;
        }

        @Override
        public synchronized void write(int b) {
            if (b == '\n') {
                lines.add(line.toString(StandardCharsets.UTF_8));
                line.reset();
            } else {
                line.write(b);
            }
        }
    }
}

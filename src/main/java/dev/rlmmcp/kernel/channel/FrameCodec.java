package dev.rlmmcp.kernel.channel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.Bytes;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * The wire format shared with the harness (rlm_harness/protocol.py): u32 header length, u64 payload length, JSON header, payload.
 * A payload length of {@link #STREAMED} means chunks follow instead, each a u32 length and its bytes,
 * ended by an empty chunk; text is streamed so, in chunks that each end on a whole character. Bytes
 * from a source (S3, a URL) are streamed as they come, and a chunk length of {@link #ABORTED} ends
 * such a stream early when its source fails: the kernel then discards what it received.
 */
final class FrameCodec {

    static final long STREAMED = -1L;
    static final int TEXT_CHUNK_CHARS = 1 << 19;
    static final int ABORTED = -1;
    static final int STREAM_CHUNK_BYTES = 1 << 20;
    /** A frame's lengths: the header's (u32) and the payload's (u64). */
    static final int HEAD_BYTES = 12;
    /** The most a kernel frame may ever hold, whatever the request: header and payload together. */
    static final long MAX_FRAME = 256L * 1024 * 1024;

    private final ObjectMapper json;

    FrameCodec(ObjectMapper json) {
        this.json = json;
    }

    void write(DataOutputStream out, Frame frame) throws IOException {
        byte[] header = json.writeValueAsBytes(frame.header());
        out.writeInt(header.length);
        out.writeLong(frame.payload().length);
        out.write(header);
        out.write(frame.payload());
        out.flush();
    }

    /** Sends text as UTF-8 without ever holding all of its bytes: chunk by chunk, as it is encoded. */
    void writeText(DataOutputStream out, ObjectNode header, String text) throws IOException {
        byte[] head = json.writeValueAsBytes(header);
        out.writeInt(head.length);
        out.writeLong(STREAMED);
        out.write(head);
        for (int start = 0; start < text.length(); ) {
            int end = Math.min(text.length(), start + TEXT_CHUNK_CHARS);
            if (end < text.length() && Character.isHighSurrogate(text.charAt(end - 1))) {
                end--;
            }
            byte[] chunk = text.substring(start, end).getBytes(StandardCharsets.UTF_8);
            out.writeInt(chunk.length);
            out.write(chunk);
            start = end;
        }
        out.writeInt(0);
        out.flush();
    }

    /**
     * Sends the bytes of {@code source} as they arrive, in chunks of at most {@link #STREAM_CHUNK_BYTES}
     * (one reused buffer: memory stays flat whatever the size). When the source fails, or {@code stop}
     * says so between chunks, the stream is ended with {@link #ABORTED} and the source's failure is
     * returned (the kernel's reply still follows); null when every byte was sent. An exception thrown
     * is the pipe's: the kernel is gone.
     */
    IOException writeStream(DataOutputStream out, ObjectNode header, InputStream source, StreamWatch watch)
            throws IOException {
        byte[] head = json.writeValueAsBytes(header);
        out.writeInt(head.length);
        out.writeLong(STREAMED);
        out.write(head);
        byte[] buffer = new byte[STREAM_CHUNK_BYTES];
        while (true) {
            int n;
            IOException failure = watch.stopped();
            if (failure == null) {
                try {
                    n = source.readNBytes(buffer, 0, buffer.length);
                } catch (IOException e) {
                    failure = e;
                    n = -1;
                } catch (RuntimeException e) {
                    failure = new IOException(e.getMessage(), e);
                    n = -1;
                }
            } else {
                n = -1;
            }
            if (failure != null) {
                out.writeInt(ABORTED);
                out.flush();
                return failure;
            }
            if (n <= 0) {
                out.writeInt(0);
                out.flush();
                return null;
            }
            out.writeInt(n);
            out.write(buffer, 0, n);
        }
    }

    /** What a streamed payload's writer asks between chunks: a reason to stop sending now, or null to go on. */
    interface StreamWatch {
        IOException stopped();
    }

    /**
     * Whether the next frame has wholly arrived, so that reading it cannot block: its lengths (12 bytes)
     * are looked at and put back. {@code in} must support mark and reset.
     */
    static boolean arrived(DataInputStream in) throws IOException {
        int available = in.available();
        if (available < HEAD_BYTES) {
            return false;
        }
        in.mark(HEAD_BYTES);
        try {
            long length = HEAD_BYTES + (in.readInt() & 0xFFFF_FFFFL) + in.readLong();
            return length >= HEAD_BYTES && available >= length;
        } finally {
            in.reset();
        }
    }

    /**
     * The next frame, its declared header and payload lengths checked against {@code maxBytes}
     * before anything is allocated: a kernel can declare any length, and only what the request can
     * legitimately return is read. A frame over the limit, or a header that is not a JSON object,
     * is a {@link ProtocolViolation}.
     */
    Frame read(DataInputStream in, long maxBytes) throws IOException {
        return read(in, () -> maxBytes);
    }

    /** {@link #read(DataInputStream, long)} with the limit asked once the frame's lengths have arrived. */
    Frame read(DataInputStream in, java.util.function.LongSupplier maxBytes) throws IOException {
        int headerLength = in.readInt();
        long payloadLength = in.readLong();
        long limit = Math.min(maxBytes.getAsLong(), MAX_FRAME);
        if (headerLength < 0 || payloadLength < 0 || payloadLength > limit || headerLength > limit - payloadLength) {
            throw new ProtocolViolation("it sent a frame declaring a %d-byte header and a %d-byte payload, more than "
                            .formatted(headerLength, payloadLength)
                    + "the " + Bytes.human(limit) + " its request can return");
        }
        byte[] header = in.readNBytes(headerLength);
        byte[] payload = payloadLength == 0 ? Frame.NO_PAYLOAD : in.readNBytes((int) payloadLength);
        if (header.length < headerLength || payload.length < payloadLength) {
            throw new EOFException("kernel pipe closed mid-frame");
        }
        JsonNode parsed;
        try {
            parsed = json.readTree(header);
        } catch (IOException e) {
            throw new ProtocolViolation("it sent a frame whose header is not JSON");
        }
        if (!(parsed instanceof ObjectNode object)) {
            throw new ProtocolViolation("it sent a frame whose header is not a JSON object");
        }
        return new Frame(object, payload);
    }
}

package dev.rlmmcp.core.kernel;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;

/** The wire format shared with harness.py: u32 header length, u64 payload length, JSON header, payload. */
final class FrameCodec {

    private static final int MAX_HEADER = 256 * 1024 * 1024;

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

    Frame read(DataInputStream in) throws IOException {
        int headerLength = in.readInt();
        long payloadLength = in.readLong();
        if (headerLength < 0 || headerLength > MAX_HEADER || payloadLength < 0 || payloadLength > Integer.MAX_VALUE - 8) {
            throw new IOException("corrupt kernel frame (header " + headerLength + ", payload " + payloadLength + ")");
        }
        byte[] header = in.readNBytes(headerLength);
        byte[] payload = payloadLength == 0 ? Frame.NO_PAYLOAD : in.readNBytes((int) payloadLength);
        if (header.length < headerLength || payload.length < payloadLength) {
            throw new EOFException("kernel pipe closed mid-frame");
        }
        return new Frame((ObjectNode) json.readTree(header), payload);
    }
}

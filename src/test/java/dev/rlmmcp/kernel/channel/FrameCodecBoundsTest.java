package dev.rlmmcp.kernel.channel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** A kernel declares any length it likes: nothing is allocated or read past what the request can return. */
class FrameCodecBoundsTest {

    private final FrameCodec codec = new FrameCodec(new ObjectMapper());

    private static DataInputStream frame(int headerLength, long payloadLength, byte[] rest) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(headerLength);
        out.writeLong(payloadLength);
        out.write(rest);
        return new DataInputStream(new ByteArrayInputStream(bytes.toByteArray()));
    }

    /** Counts what is read of an endless stream: a codec that believed a declared length would read on. */
    private static final class Endless extends InputStream {
        final AtomicLong read = new AtomicLong();

        @Override
        public int read() {
            read.incrementAndGet();
            return ' ';
        }

        @Override
        public int read(byte[] b, int off, int len) {
            java.util.Arrays.fill(b, off, off + len, (byte) ' ');
            read.addAndGet(len);
            return len;
        }
    }

    @Test
    void aFrameWithinItsLimitIsRead() throws IOException {
        byte[] header = "{\"id\":1,\"ok\":true}".getBytes(StandardCharsets.UTF_8);
        Frame f = codec.read(frame(header.length, 0, header), 1024);
        assertThat(f.header().path("id").asInt()).isEqualTo(1);
    }

    @Test
    void aHugeDeclaredPayloadIsRefusedBeforeAnyByteOfItIsRead() throws IOException {
        Endless rest = new Endless();
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(head);
        out.writeInt(20);
        out.writeLong(1L << 31);
        DataInputStream in = new DataInputStream(
                new java.io.SequenceInputStream(new ByteArrayInputStream(head.toByteArray()), rest));
        assertThatThrownBy(() -> codec.read(in, 16 << 20))
                .isInstanceOf(ProtocolViolation.class)
                .hasMessageContaining("2147483648-byte payload")
                .hasMessageContaining("16.0 MB");
        assertThat(rest.read.get()).isZero();
    }

    @Test
    void aHugeDeclaredHeaderIsRefused() {
        assertThatThrownBy(() -> codec.read(frame(Integer.MAX_VALUE, 0, new byte[0]), 16 << 20))
                .isInstanceOf(ProtocolViolation.class);
    }

    @Test
    void negativeAndOverflowingLengthsAreRefused() {
        assertThatThrownBy(() -> codec.read(frame(-1, 0, new byte[0]), 1 << 20)).isInstanceOf(ProtocolViolation.class);
        assertThatThrownBy(() -> codec.read(frame(10, -5, new byte[0]), 1 << 20))
                .isInstanceOf(ProtocolViolation.class);
        // header + payload would overflow a long to a negative sum
        assertThatThrownBy(() -> codec.read(frame(1 << 30, Long.MAX_VALUE, new byte[0]), 1 << 20))
                .isInstanceOf(ProtocolViolation.class);
    }

    @Test
    void theLimitCountsHeaderAndPayloadTogether() throws IOException {
        byte[] header = "{}".getBytes(StandardCharsets.UTF_8);
        byte[] rest = new byte[header.length + 100];
        System.arraycopy(header, 0, rest, 0, header.length);
        assertThat(codec.read(frame(header.length, 100, rest), 102).payload()).hasSize(100);
        assertThatThrownBy(() -> codec.read(frame(header.length, 100, rest), 101))
                .isInstanceOf(ProtocolViolation.class);
    }

    @Test
    void noLimitGoesPastTheFrameMaximum() {
        assertThatThrownBy(() -> codec.read(frame(10, FrameCodec.MAX_FRAME, new byte[0]), Long.MAX_VALUE))
                .isInstanceOf(ProtocolViolation.class);
    }

    @Test
    void aHeaderThatIsNotAJsonObjectIsAViolation() {
        byte[] array = "[1,2]".getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> codec.read(frame(array.length, 0, array), 1024))
                .isInstanceOf(ProtocolViolation.class)
                .hasMessageContaining("not a JSON object");
        byte[] junk = "{not json".getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> codec.read(frame(junk.length, 0, junk), 1024))
                .isInstanceOf(ProtocolViolation.class)
                .hasMessageContaining("not JSON");
    }

    @Test
    void theLimitIsAskedWhenTheLengthsArrive() throws IOException {
        byte[] header = "{\"id\":2}".getBytes(StandardCharsets.UTF_8);
        AtomicLong limit = new AtomicLong(1);
        DataInputStream in = frame(header.length, 0, header);
        limit.set(1024);
        assertThat(codec.read(in, limit::get).header().path("id").asInt()).isEqualTo(2);
    }

    @Test
    void aFrameHasArrivedOnlyWhenEveryByteItDeclaresIsThereAndLookingReadsNothing() throws IOException {
        byte[] header = "{\"id\":3}".getBytes(StandardCharsets.UTF_8);
        DataInputStream whole = new DataInputStream(new java.io.BufferedInputStream(
                frame(header.length, 2, concat(header, new byte[] {1, 2}))));
        assertThat(FrameCodec.arrived(whole)).isTrue();
        assertThat(codec.read(whole, 1024).header().path("id").asInt()).isEqualTo(3);

        DataInputStream cut = new DataInputStream(new java.io.BufferedInputStream(frame(header.length, 2, header)));
        assertThat(FrameCodec.arrived(cut)).isFalse();
        assertThat(cut.readInt()).isEqualTo(header.length);

        DataInputStream lengthsOnly = new DataInputStream(
                new java.io.BufferedInputStream(new java.io.ByteArrayInputStream(new byte[] {0, 0, 0, 5, 0, 0})));
        assertThat(FrameCodec.arrived(lengthsOnly)).isFalse();
        assertThat(FrameCodec.arrived(
                        new DataInputStream(new java.io.BufferedInputStream(frame(-1, Long.MAX_VALUE, header)))))
                .isFalse();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] both = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, both, a.length, b.length);
        return both;
    }
}

package dev.rlmmcp.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rlmmcp.testsupport.S3ProxyServer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Uploads and reads against a real S3 server (S3Proxy): single PUT, multipart, and a source that fails. */
class S3StoreIT {

    @TempDir
    static Path tmp;

    static S3ProxyServer server;
    static S3Store s3;

    @BeforeAll
    static void start() throws IOException {
        server = S3ProxyServer.start(tmp.resolve("s3"));
        server.bucket("uploads");
        Duration t = Duration.ofSeconds(30);
        s3 = new S3Store(S3Settings.fromEnv(server.env(), "uploads"), t, t);
    }

    @AfterAll
    static void stop() {
        s3.close();
        server.close();
    }

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    private static byte[] read(String key) throws IOException {
        try (Download d = s3.open("uploads", key);
                InputStream in = d.body()) {
            return in.readAllBytes();
        }
    }

    @Test
    void aSmallStreamIsOnePut() throws IOException {
        byte[] data = bytes(1000, 1);
        S3Store.Uploaded up = s3.upload("uploads", "small.bin", new ByteArrayInputStream(data), -1);
        assertThat(up.parts()).isEqualTo(1);
        assertThat(read("small.bin")).isEqualTo(data);
    }

    @Test
    void aStreamOfExactlyTwoPartsIsAMultipartUploadOfTwo() throws IOException {
        byte[] data = bytes(2 * S3Store.MIN_PART_BYTES, 2);
        S3Store.Uploaded up = s3.upload("uploads", "two.bin", new ByteArrayInputStream(data), -1);
        assertThat(up.parts()).isEqualTo(2);
        assertThat(up.bytes()).isEqualTo(data.length);
        assertThat(Arrays.equals(read("two.bin"), data)).isTrue();
    }

    @Test
    void aSourceThatFailsLeavesNoObjectAndNoPendingUpload() {
        InputStream failing = new SequenceInputStream(
                new ByteArrayInputStream(bytes(S3Store.MIN_PART_BYTES + 100, 3)), new InputStream() {
                    @Override
                    public int read() throws IOException {
                        throw new IOException("connection reset");
                    }
                });
        assertThatThrownBy(() -> s3.upload("uploads", "broken.bin", failing, -1))
                .hasMessageContaining("connection reset");
        assertThat(s3.list("uploads", "broken", null, 10).entries()).isEmpty();
        try (Stream<Path> left = Files.walk(server.baseDir().resolve("uploads"))) {
            assertThat(left.map(Path::toString).filter(p -> p.contains("broken")))
                    .isEmpty();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void closingADownloadEarlyAbandonsIt() throws IOException {
        byte[] data = bytes(4 * 1024 * 1024, 4);
        server.object("uploads", "early.bin", data);
        try (Download d = s3.open("uploads", "early.bin")) {
            assertThat(d.size()).isEqualTo(data.length);
            assertThat(d.body().readNBytes(10)).isEqualTo(Arrays.copyOf(data, 10));
        }
        assertThat(read("early.bin")).hasSize(data.length);
    }
}

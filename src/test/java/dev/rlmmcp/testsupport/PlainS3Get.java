package dev.rlmmcp.testsupport;

import dev.rlmmcp.data.Download;
import dev.rlmmcp.data.S3Settings;
import dev.rlmmcp.data.S3Store;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;

/**
 * The benchmark's baseline: a plain streaming GET of an object with the same SDK client the server
 * uses (MINIO_* from the environment), the bytes read into one buffer and dropped.
 * {@code PlainS3Get BUCKET KEY RUNS} prints one line per run: bytes and seconds.
 */
public final class PlainS3Get {

    private PlainS3Get() {}

    public static void main(String[] args) throws IOException {
        String bucket = args[0];
        String key = args[1];
        int runs = Integer.parseInt(args[2]);
        Duration timeout = Duration.ofSeconds(60);
        try (S3Store s3 = new S3Store(S3Settings.fromEnv(System.getenv(), bucket), timeout, timeout)) {
            byte[] buffer = new byte[1 << 20];
            for (int run = 0; run < runs; run++) {
                long started = System.nanoTime();
                long bytes = 0;
                try (Download download = s3.open(bucket, key);
                        InputStream in = download.body()) {
                    for (int n; (n = in.read(buffer)) >= 0; ) {
                        bytes += n;
                    }
                }
                System.out.println(bytes + " " + (System.nanoTime() - started) / 1e9);
            }
        }
    }
}

package dev.rlmmcp.data;

import dev.rlmmcp.base.Bytes;
import dev.rlmmcp.base.ErrorCode;
import java.time.Duration;

/**
 * The remote sources the data tools read: S3 and URLs, with the cap on one transfer's size. A
 * declared size over the cap is refused before any byte moves; a stream is cut when it passes it.
 */
public record DataSources(S3Store s3, UrlFetcher urls, long maxTransferBytes) implements AutoCloseable {

    /** S3 not configured, public URLs only, a 10 GiB cap: what a server without data options gets. */
    public static DataSources defaults() {
        Duration timeout = Duration.ofSeconds(60);
        return new DataSources(
                new S3Store(S3Settings.notConfigured(S3Settings.DEFAULT_BUCKET), timeout, timeout),
                new UrlFetcher(UrlPolicy.publicOnly(), timeout, timeout, 5),
                10L << 30);
    }

    /** The download, refused if it declares more than the cap, and capped while it streams. */
    public Download capped(Download download, String argument) {
        if (maxTransferBytes > 0 && download.size() > maxTransferBytes) {
            download.close();
            throw tooLarge(download.shown() + " is " + Bytes.human(download.size()), argument)
                    .refusal();
        }
        if (maxTransferBytes <= 0) {
            return download;
        }
        return new Download(
                new CappedInputStream(
                        download.body(),
                        maxTransferBytes,
                        cap -> tooLarge(download.shown() + " sent more than " + Bytes.human(cap), argument)),
                download.size(),
                download.shown(),
                download.contentType());
    }

    private TransferException tooLarge(String what, String argument) {
        return new TransferException(
                ErrorCode.TOO_LARGE,
                what + ", over the server's transfer cap of " + Bytes.human(maxTransferBytes),
                argument,
                "use a smaller object, or raise --max-transfer-mb (RLM_MAX_TRANSFER_MB)");
    }

    @Override
    public void close() {
        s3.close();
    }
}

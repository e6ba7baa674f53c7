package dev.rlmmcp.cli;

import dev.rlmmcp.data.DataSources;
import dev.rlmmcp.data.S3Settings;
import dev.rlmmcp.data.S3Store;
import dev.rlmmcp.data.UrlFetcher;
import dev.rlmmcp.data.UrlPolicy;
import java.time.Duration;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * Options of the remote data sources: the default S3 bucket, URL safety, transfer caps and timeouts.
 * S3 itself is configured by the environment only (MINIO_ENDPOINT, MINIO_ACCESS_KEY, MINIO_SECRET_KEY,
 * MINIO_SECURE, or the AWS variables and profiles), so that keys never appear on a command line.
 */
final class DataOptions {

    @Option(
            names = "--s3-bucket",
            paramLabel = "NAME",
            defaultValue = "${env:RLM_S3_BUCKET:-" + S3Settings.DEFAULT_BUCKET + "}",
            description =
                    "Default bucket of the S3 tools (RLM_S3_BUCKET; default: ${DEFAULT-VALUE}). S3 itself: MINIO_ENDPOINT, MINIO_ACCESS_KEY, MINIO_SECRET_KEY (MINIO_SECURE) or the AWS_* variables.")
    String bucket;

    @Option(
            names = "--allow-private-urls",
            defaultValue = "${env:RLM_URL_ALLOW_PRIVATE:-false}",
            description =
                    "Let rlm_load_url and rlm_upload_url fetch loopback, private and link-local addresses (RLM_URL_ALLOW_PRIVATE; default: refused).")
    boolean allowPrivateUrls;

    @Option(
            names = "--url-allowlist",
            paramLabel = "LIST",
            defaultValue = "${env:RLM_URL_ALLOWLIST}",
            description =
                    "Host names and CIDRs that URL tools may fetch even though private, comma-separated, e.g. files.lan,10.1.0.0/16 (RLM_URL_ALLOWLIST).")
    String urlAllowlist;

    @Option(
            names = "--max-transfer-mb",
            paramLabel = "MB",
            defaultValue = "${env:RLM_MAX_TRANSFER_MB:-10240}",
            description =
                    "Largest object or download one transfer may move, 0 for no cap (RLM_MAX_TRANSFER_MB; default: ${DEFAULT-VALUE}); loads are also capped by --max-memory-mb.")
    long maxTransferMb;

    @Option(
            names = "--url-timeout-s",
            paramLabel = "S",
            defaultValue = "${env:RLM_URL_TIMEOUT_S:-60}",
            description =
                    "Connect timeout, and longest wait for more bytes, of URL and S3 transfers (RLM_URL_TIMEOUT_S; default: ${DEFAULT-VALUE}).")
    long urlTimeoutS;

    /** An S3 account of its own for the snapshot store, configured as the data tools' one is. */
    S3Store snapshotS3() {
        Duration timeout = Duration.ofSeconds(Math.max(1, urlTimeoutS));
        return new S3Store(S3Settings.fromEnv(System.getenv(), bucket), timeout, timeout);
    }

    /** The data tools' sources; {@code reserved} (or null) is S3 they must not reach: the snapshot store's. */
    DataSources sources(CommandSpec spec, S3Store.Reserved reserved) {
        KernelOptions.require(spec, maxTransferMb >= 0, "--max-transfer-mb must be 0 (no cap) or more");
        KernelOptions.require(spec, urlTimeoutS >= 1, "--url-timeout-s must be at least 1");
        KernelOptions.require(
                spec,
                bucket.matches("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]"),
                "--s3-bucket '" + bucket + "' is not a valid bucket name");
        UrlPolicy policy;
        try {
            policy = UrlPolicy.of(allowPrivateUrls, KernelOptions.names(urlAllowlist));
        } catch (IllegalArgumentException e) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--url-allowlist: " + e.getMessage());
        }
        Duration timeout = Duration.ofSeconds(urlTimeoutS);
        S3Store s3 = new S3Store(S3Settings.fromEnv(System.getenv(), bucket), timeout, timeout);
        return new DataSources(
                reserved == null ? s3 : s3.reserving(reserved),
                new UrlFetcher(policy, timeout, timeout, 5),
                maxTransferMb * 1024 * 1024);
    }
}

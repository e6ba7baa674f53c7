package dev.rlmmcp.data;

import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import java.io.ByteArrayInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * The S3 (or MinIO) account the data tools use: listing, streamed reads, and uploads from a stream in
 * parts of bounded size, so no object is ever held whole in memory. The client is built on first use.
 */
public final class S3Store implements AutoCloseable {

    /** Part size for uploads: S3's minimum is 5 MiB; at most 10,000 parts per object. */
    static final int MIN_PART_BYTES = 8 * 1024 * 1024;

    private static final int MAX_PARTS = 10_000;
    /** Largest object stored with one PUT from a file (S3 takes up to 5 GiB). */
    static final long SINGLE_PUT_BYTES = 4L << 30;

    private final S3Settings settings;
    private final Duration connectTimeout;
    private final Duration readTimeout;
    private S3Client client;
    private final Reserved reserved;

    public S3Store(S3Settings settings, Duration connectTimeout, Duration readTimeout) {
        this(settings, connectTimeout, readTimeout, null);
    }

    private S3Store(S3Settings settings, Duration connectTimeout, Duration readTimeout, Reserved reserved) {
        this.settings = settings;
        this.connectTimeout = connectTimeout;
        this.readTimeout = readTimeout;
        this.reserved = reserved;
    }

    /**
     * Keys this store refuses to read, write, list or delete: the server's own (the snapshot store's,
     * when it shares the account), which a tool call must never reach.
     */
    public record Reserved(String bucket, String prefix) {

        boolean covers(String bucket, String key) {
            return this.bucket.equals(bucket)
                    && (key.startsWith(prefix) || normal(key).startsWith(normal(prefix)));
        }

        /** The key as a filesystem-backed server may read it: empty and "." segments dropped, ".." applied. */
        private static String normal(String key) {
            java.util.ArrayDeque<String> parts = new java.util.ArrayDeque<>();
            for (String part : key.split("/", -1)) {
                if (part.equals("..")) {
                    parts.pollLast();
                } else if (!part.isEmpty() && !part.equals(".")) {
                    parts.addLast(part);
                }
            }
            return String.join("/", parts) + (key.endsWith("/") && !parts.isEmpty() ? "/" : "");
        }
    }

    /** The same account, refusing {@code reserved}'s keys. */
    public S3Store reserving(Reserved reserved) {
        return new S3Store(settings, connectTimeout, readTimeout, reserved);
    }

    private void allowed(String bucket, String key) {
        if (reserved != null && reserved.covers(bucket, key)) {
            throw new RlmException(
                    ErrorCode.PERMISSION_DENIED,
                    "s3://" + bucket + "/" + key
                            + " is in s3://" + reserved.bucket() + "/" + reserved.prefix()
                            + ", where the server keeps its session snapshots; the data tools cannot reach it",
                    "key",
                    "use another bucket or key prefix");
        }
    }

    public S3Settings settings() {
        return settings;
    }

    public record Bucket(String name, Instant created) {}

    public record Entry(String key, long size, Instant lastModified) {}

    public record Page(String bucket, String prefix, List<Entry> entries, boolean truncated, String nextToken) {}

    public record Uploaded(String bucket, String key, long bytes, int parts, String etag) {}

    /** The bucket a call names, or the configured default. */
    public String bucket(String asked) {
        return asked == null || asked.isBlank() ? settings.defaultBucket() : asked;
    }

    public List<Bucket> buckets() {
        try {
            return client().listBuckets().buckets().stream()
                    .map(b -> new Bucket(b.name(), b.creationDate()))
                    .toList();
        } catch (SdkException e) {
            throw refusal(e, null, null, null);
        }
    }

    public Page list(String bucket, String prefix, String token, int maxKeys) {
        try {
            ListObjectsV2Response page = client().listObjectsV2(r ->
                    r.bucket(bucket).prefix(prefix).continuationToken(token).maxKeys(maxKeys));
            List<Entry> entries = new ArrayList<>();
            page.contents().stream()
                    .filter(o -> reserved == null || !reserved.covers(bucket, o.key()))
                    .forEach(o -> entries.add(new Entry(o.key(), o.size(), o.lastModified())));
            return new Page(
                    bucket, prefix, entries, Boolean.TRUE.equals(page.isTruncated()), page.nextContinuationToken());
        } catch (SdkException e) {
            throw refusal(e, bucket, null, token == null ? null : "continuation_token");
        }
    }

    /** Opens an object for reading; closing the download before its end abandons the connection. */
    public Download open(String bucket, String key) {
        allowed(bucket, key);
        try {
            ResponseInputStream<GetObjectResponse> stream =
                    client().getObject(r -> r.bucket(bucket).key(key));
            Long length = stream.response().contentLength();
            return new Download(
                    new AbortOnEarlyClose(stream),
                    length == null ? -1 : length,
                    "s3://" + bucket + "/" + key,
                    stream.response().contentType());
        } catch (SdkException e) {
            throw refusal(e, bucket, key, "key");
        }
    }

    /**
     * Stores the stream as an object: one PUT if it fits in one part, else a multipart upload whose
     * parts are read one at a time into one buffer. {@code sizeHint} (-1 if unknown) only picks the part
     * size. A failed multipart upload is aborted, leaving nothing behind.
     */
    public Uploaded upload(String bucket, String key, InputStream in, long sizeHint) throws IOException {
        allowed(bucket, key);
        int partBytes = (int) Math.max(MIN_PART_BYTES, sizeHint < 0 ? 0 : (sizeHint + MAX_PARTS - 1) / MAX_PARTS);
        byte[] part = new byte[partBytes];
        int n = in.readNBytes(part, 0, part.length);
        try {
            if (n < part.length) {
                String etag = client().putObject(r -> r.bucket(bucket).key(key), body(part, n))
                        .eTag();
                return new Uploaded(bucket, key, n, 1, etag);
            }
            return multipart(bucket, key, in, part, n);
        } catch (SdkException e) {
            throw refusal(e, bucket, key, "key");
        }
    }

    /**
     * Stores a local file as an object, streamed from the file: one PUT up to {@link #SINGLE_PUT_BYTES}
     * (one request where parts take at least three, and a file can be re-read for a retry), parts above.
     */
    public Uploaded uploadFile(String bucket, String key, Path file) throws IOException {
        allowed(bucket, key);
        long size = Files.size(file);
        if (size > SINGLE_PUT_BYTES) {
            try (InputStream in = Files.newInputStream(file)) {
                return upload(bucket, key, in, size);
            }
        }
        try {
            String etag = client().putObject(
                            r -> r.bucket(bucket).key(key).contentLength(size), RequestBody.fromFile(file))
                    .eTag();
            return new Uploaded(bucket, key, size, 1, etag);
        } catch (SdkException e) {
            throw refusal(e, bucket, key, "key");
        }
    }

    private Uploaded multipart(String bucket, String key, InputStream in, byte[] part, int first) throws IOException {
        String uploadId =
                client().createMultipartUpload(r -> r.bucket(bucket).key(key)).uploadId();
        boolean done = false;
        try {
            List<CompletedPart> parts = new ArrayList<>();
            long total = 0;
            for (int n = first; n > 0; n = in.readNBytes(part, 0, part.length)) {
                int number = parts.size() + 1;
                if (number > MAX_PARTS) {
                    throw new TransferException(
                            ErrorCode.TOO_LARGE,
                            "the upload needs more than " + MAX_PARTS + " parts of " + part.length + " bytes",
                            "url",
                            "upload a smaller object");
                }
                String etag = client().uploadPart(
                                r -> r.bucket(bucket)
                                        .key(key)
                                        .uploadId(uploadId)
                                        .partNumber(number),
                                body(part, n))
                        .eTag();
                parts.add(CompletedPart.builder().partNumber(number).eTag(etag).build());
                total += n;
            }
            String etag = client().completeMultipartUpload(
                            r -> r.bucket(bucket).key(key).uploadId(uploadId).multipartUpload(m -> m.parts(parts)))
                    .eTag();
            done = true;
            return new Uploaded(bucket, key, total, parts.size(), etag);
        } finally {
            if (!done) {
                try {
                    client().abortMultipartUpload(r -> r.bucket(bucket).key(key).uploadId(uploadId));
                } catch (SdkException ignored) {
                    // the upload failed already; its parts expire with the bucket's lifecycle rules
                }
            }
        }
    }

    /** A part's bytes, read from the one buffer as often as signing and sending need, never copied. */
    private static RequestBody body(byte[] part, int length) {
        return RequestBody.fromContentProvider(
                () -> new ByteArrayInputStream(part, 0, length), length, "application/octet-stream");
    }

    /** Every object under {@code prefix}, all pages. */
    public List<Entry> listAll(String bucket, String prefix) {
        List<Entry> all = new ArrayList<>();
        String token = null;
        do {
            Page page = list(bucket, prefix, token, 1000);
            all.addAll(page.entries());
            token = page.truncated() ? page.nextToken() : null;
        } while (token != null);
        return all;
    }

    /** Removes an object; removing one that is not there is not an error. */
    public void delete(String bucket, String key) {
        allowed(bucket, key);
        try {
            client().deleteObject(r -> r.bucket(bucket).key(key));
        } catch (SdkException e) {
            throw refusal(e, bucket, key, "key");
        }
    }

    /** Creates the bucket unless it is there already. */
    public void ensureBucket(String bucket) {
        try {
            client().headBucket(r -> r.bucket(bucket));
        } catch (S3Exception e) {
            if (e.statusCode() != 404) {
                throw refusal(e, bucket, null, "bucket");
            }
            try {
                client().createBucket(r -> r.bucket(bucket));
            } catch (SdkException create) {
                throw refusal(create, bucket, null, "bucket");
            }
        } catch (SdkException e) {
            throw refusal(e, bucket, null, "bucket");
        }
    }

    /** Refuses with what to set when S3 is not configured. */
    public void requireConfigured() {
        if (!settings.configured()) {
            throw new RlmException(
                    ErrorCode.NOT_CONFIGURED, settings.missing() + ": " + S3Settings.HOW, null, S3Settings.HOW);
        }
    }

    private synchronized S3Client client() {
        requireConfigured();
        if (client == null) {
            S3ClientBuilder builder = S3Client.builder()
                    .httpClientBuilder(UrlConnectionHttpClient.builder()
                            .connectionTimeout(connectTimeout)
                            .socketTimeout(readTimeout))
                    .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                    .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
            if (settings.region() != null) {
                builder.region(Region.of(settings.region()));
            } else if (!settings.awsChain()) {
                builder.region(Region.US_EAST_1);
            }
            if (settings.endpoint() != null) {
                builder.endpointOverride(settings.endpoint()).forcePathStyle(true);
            }
            builder.credentialsProvider(
                    settings.awsChain()
                            ? DefaultCredentialsProvider.builder().build()
                            : StaticCredentialsProvider.create(
                                    AwsBasicCredentials.create(settings.accessKey(), settings.secretKey())));
            client = builder.build();
        }
        return client;
    }

    /** An SDK failure as a refusal the agent can act on. */
    RlmException refusal(SdkException e, String bucket, String key, String argument) {
        String where = bucket == null ? "S3" : key == null ? "bucket " + bucket : "s3://" + bucket + "/" + key;
        if (e instanceof S3Exception s3) {
            return serviceRefusal(s3, where, bucket, key, argument);
        }
        if (e instanceof SdkClientException && e.getCause() instanceof java.net.SocketTimeoutException) {
            return new RlmException(
                    ErrorCode.TIMEOUT,
                    "S3 did not answer in time on " + where,
                    null,
                    "retry, or raise --url-timeout-s");
        }
        return new RlmException(
                ErrorCode.UPSTREAM_ERROR,
                "cannot reach S3 for " + where + ": " + e.getMessage(),
                null,
                "check MINIO_ENDPOINT and that the S3 server is up");
    }

    /** An error the S3 server answered with (on {@code where}), as a refusal by its code and status. */
    private static RlmException serviceRefusal(
            S3Exception s3, String where, String bucket, String key, String argument) {
        String code = s3.awsErrorDetails() == null ? "" : s3.awsErrorDetails().errorCode();
        String detail = s3.awsErrorDetails() == null
                ? s3.getMessage()
                : s3.awsErrorDetails().errorMessage();
        if ("NoSuchBucket".equals(code) || s3.statusCode() == 404 && key == null) {
            return new RlmException(
                    ErrorCode.NOT_FOUND, "no bucket " + bucket, "bucket", "call rlm_list_buckets to see the buckets");
        }
        if ("NoSuchKey".equals(code) || s3.statusCode() == 404) {
            return new RlmException(
                    ErrorCode.NOT_FOUND,
                    "no object " + key + " in bucket " + bucket,
                    "key",
                    "call rlm_list_s3 with a prefix to find the key");
        }
        if ("continuation_token".equals(argument) && ("InvalidToken".equals(code) || "InvalidArgument".equals(code))) {
            return RlmException.invalid(
                    argument,
                    where + " refused the request: " + detail,
                    "pass the next_continuation_token of the previous page unchanged");
        }
        if (s3.statusCode() == 403 || "InvalidAccessKeyId".equals(code) || "SignatureDoesNotMatch".equals(code)) {
            return new RlmException(
                    ErrorCode.PERMISSION_DENIED,
                    "S3 refused access to " + where + " (" + code + "): " + detail,
                    bucket == null ? null : "bucket",
                    "check MINIO_ACCESS_KEY / MINIO_SECRET_KEY (or the AWS credentials) and the bucket's policy");
        }
        return new RlmException(
                ErrorCode.UPSTREAM_ERROR,
                "S3 failed on " + where + ": " + s3.statusCode() + " " + code + " " + detail,
                null,
                "retry; if it persists, check the S3 server");
    }

    @Override
    public synchronized void close() {
        if (client != null) {
            client.close();
        }
    }

    /** Abandons the connection when closed before the end, instead of reading the rest of a large object. */
    private static final class AbortOnEarlyClose extends FilterInputStream {

        private final ResponseInputStream<?> stream;
        private boolean ended;

        AbortOnEarlyClose(ResponseInputStream<?> stream) {
            super(stream);
            this.stream = stream;
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            ended |= b < 0;
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            ended |= n < 0;
            return n;
        }

        @Override
        public void close() throws IOException {
            if (!ended) {
                stream.abort();
            }
            super.close();
        }
    }
}

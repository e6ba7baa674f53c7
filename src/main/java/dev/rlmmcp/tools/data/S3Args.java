package dev.rlmmcp.tools.data;

import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.data.S3Store;
import dev.rlmmcp.tools.Args;
import java.nio.charset.StandardCharsets;

/** The bucket and key arguments of the S3 tools, checked before any request is made. */
final class S3Args {

    private S3Args() {}

    /** The bucket named (3..63 characters of a-z, 0-9, '.', '-'), or the configured default. */
    static String bucket(Args args, S3Store s3) {
        String bucket = s3.bucket(args.optionalString("bucket"));
        if (!bucket.matches("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")) {
            throw RlmException.invalid(
                    "bucket",
                    "'" + bucket + "' is not a valid bucket name",
                    "use 3 to 63 lower-case letters, digits, dots or hyphens; rlm_list_buckets lists them");
        }
        return bucket;
    }

    static String key(Args args) {
        String key = args.requiredString("key");
        int bytes = key.getBytes(StandardCharsets.UTF_8).length;
        if (bytes == 0 || bytes > 1024) {
            throw RlmException.invalid(
                    "key",
                    "key must be 1 to 1024 bytes of UTF-8, not " + bytes,
                    "pass the object's key, e.g. logs/app.log; rlm_list_s3 lists them");
        }
        return key;
    }
}

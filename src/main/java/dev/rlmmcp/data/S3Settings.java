package dev.rlmmcp.data;

import java.net.URI;
import java.util.Map;

/**
 * Where S3 is and how to sign in: a MinIO-style endpoint with keys (MINIO_* variables; path-style access,
 * since such an endpoint seldom has a DNS name per bucket), or AWS itself through the SDK's standard
 * chain (AWS_* variables, profiles). When neither is configured, {@code missing} says what to set and
 * the S3 tools refuse with it.
 */
public record S3Settings(
        URI endpoint,
        String region,
        String accessKey,
        String secretKey,
        boolean awsChain,
        String defaultBucket,
        String missing) {

    public static final String DEFAULT_BUCKET = "claude-code";
    public static final String HOW =
            "set MINIO_ENDPOINT (e.g. http://127.0.0.1:9000, or host:port with MINIO_SECURE=true "
                    + "for https), MINIO_ACCESS_KEY and MINIO_SECRET_KEY in the server's environment, or the standard "
                    + "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_REGION (or AWS_PROFILE), and restart the server";

    static S3Settings notConfigured(String defaultBucket) {
        return new S3Settings(null, null, null, null, false, defaultBucket, "S3 is not configured");
    }

    /** From environment variables; MINIO_* first, then the AWS chain if any AWS_* credential source is named. */
    public static S3Settings fromEnv(Map<String, String> env, String defaultBucket) {
        String region = first(env, "MINIO_REGION", "AWS_REGION", "AWS_DEFAULT_REGION");
        String endpoint = blankToNull(env.get("MINIO_ENDPOINT"));
        String accessKey = first(env, "MINIO_ACCESS_KEY", "AWS_ACCESS_KEY_ID");
        String secretKey = first(env, "MINIO_SECRET_KEY", "AWS_SECRET_ACCESS_KEY");
        if (endpoint != null) {
            URI uri = endpoint(endpoint, env.get("MINIO_SECURE"));
            if (accessKey == null || secretKey == null) {
                return new S3Settings(
                        uri,
                        region,
                        null,
                        null,
                        false,
                        defaultBucket,
                        "S3 is not configured: MINIO_ENDPOINT is set but MINIO_ACCESS_KEY or MINIO_SECRET_KEY is not");
            }
            return new S3Settings(
                    uri, region == null ? "us-east-1" : region, accessKey, secretKey, false, defaultBucket, null);
        }
        boolean chain = accessKey != null && secretKey != null
                || first(
                                env,
                                "AWS_PROFILE",
                                "AWS_WEB_IDENTITY_TOKEN_FILE",
                                "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                                "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
                        != null;
        if (chain) {
            String custom = first(env, "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL");
            return new S3Settings(
                    custom == null ? null : URI.create(custom), region, null, null, true, defaultBucket, null);
        }
        return notConfigured(defaultBucket);
    }

    /** host:port takes its scheme from MINIO_SECURE (https when true, else http); a URL keeps its own. */
    static URI endpoint(String value, String secure) {
        String v = value.strip();
        if (v.contains("://")) {
            return URI.create(v);
        }
        boolean https = secure != null
                && (secure.equalsIgnoreCase("true") || secure.equals("1") || secure.equalsIgnoreCase("yes"));
        return URI.create((https ? "https://" : "http://") + v);
    }

    public boolean configured() {
        return missing == null;
    }

    /**
     * Whether the environment names S3 at all: set up, or half set up (an endpoint without its keys), where
     * the S3 tools are offered to say what is missing. With nothing named they could only fail, and are not.
     */
    public boolean named() {
        return configured() || endpoint != null;
    }

    private static String first(Map<String, String> env, String... names) {
        for (String name : names) {
            String value = blankToNull(env.get(name));
            if (value != null) {
                return value;
            }
        }
        return null;
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.strip();
    }

    /** Never shows the secret. */
    @Override
    public String toString() {
        return "S3Settings[endpoint=" + endpoint + ", region=" + region + ", accessKey=" + accessKey + ", awsChain="
                + awsChain + ", defaultBucket=" + defaultBucket + ", missing=" + missing + "]";
    }
}

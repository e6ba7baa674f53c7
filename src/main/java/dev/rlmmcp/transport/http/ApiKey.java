package dev.rlmmcp.transport.http;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/** The API key clients must present. Never printed: {@link #toString()} hides it. */
public final class ApiKey {

    private final byte[] key;

    private ApiKey(String key) {
        this.key = key.getBytes(StandardCharsets.UTF_8);
    }

    /** The key, or null when {@code value} is null or blank (authentication off). */
    public static ApiKey of(String value) {
        return value == null || value.isBlank() ? null : new ApiKey(value.strip());
    }

    /** Compares in time that depends only on the lengths, never on where the first difference is. */
    public boolean matches(String candidate) {
        if (candidate == null) {
            return false;
        }
        return MessageDigest.isEqual(key, candidate.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public String toString() {
        return "ApiKey[hidden]";
    }
}

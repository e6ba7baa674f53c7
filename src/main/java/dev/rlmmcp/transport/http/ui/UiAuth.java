package dev.rlmmcp.transport.http.ui;

import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Who may see /ui when an API key is configured: a request with {@code Authorization: Bearer <key>},
 * or a browser holding the cookie the login form gave it. The cookie holds an HMAC of a random
 * per-process nonce under the key, never the key itself, so it dies with the process. Every
 * comparison is constant-time.
 */
final class UiAuth {

    static final String COOKIE = "rlm_ui";

    private final byte[] key;
    private final byte[] token;

    private UiAuth(String key) {
        this.key = key == null ? null : key.getBytes(StandardCharsets.UTF_8);
        this.token = key == null
                ? null
                : HexFormat.of().formatHex(hmac(this.key, nonce())).getBytes(StandardCharsets.US_ASCII);
    }

    /** The key from RLM_API_KEY; blank means the UI is open, as the rest of the server is. */
    static UiAuth fromEnvironment() {
        return of(System.getenv("RLM_API_KEY"));
    }

    static UiAuth of(String key) {
        return new UiAuth(key == null || key.isBlank() ? null : key);
    }

    boolean required() {
        return key != null;
    }

    boolean allows(HttpServletRequest request) {
        if (key == null) {
            return true;
        }
        String header = request.getHeader("Authorization");
        if (header != null
                && header.regionMatches(true, 0, "Bearer ", 0, 7)
                && keyMatches(header.substring(7).trim())) {
            return true;
        }
        Cookie[] cookies = request.getCookies();
        if (cookies != null) {
            for (Cookie c : cookies) {
                if (COOKIE.equals(c.getName())
                        && c.getValue() != null
                        && MessageDigest.isEqual(token, c.getValue().getBytes(StandardCharsets.US_ASCII))) {
                    return true;
                }
            }
        }
        return false;
    }

    boolean keyMatches(String candidate) {
        return key != null
                && candidate != null
                && MessageDigest.isEqual(key, candidate.getBytes(StandardCharsets.UTF_8));
    }

    /** HttpOnly, SameSite=Strict, scoped to /ui, gone when the browser closes. */
    void grant(HttpServletResponse response, boolean secure) {
        response.addHeader(
                "Set-Cookie",
                COOKIE + "=" + new String(token, StandardCharsets.US_ASCII) + "; Path=/ui; HttpOnly; SameSite=Strict"
                        + (secure ? "; Secure" : ""));
    }

    void revoke(HttpServletResponse response) {
        response.addHeader("Set-Cookie", COOKIE + "=; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=0");
    }

    private static byte[] nonce() {
        byte[] nonce = new byte[32];
        new SecureRandom().nextBytes(nonce);
        return nonce;
    }

    private static byte[] hmac(byte[] key, byte[] message) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(message);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }
}

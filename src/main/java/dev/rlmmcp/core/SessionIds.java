package dev.rlmmcp.core;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.regex.Pattern;

/** What a session id looks like, and new random ones. */
final class SessionIds {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Pattern WELL_FORMED = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    private SessionIds() {}

    /** A new id: {@code s-} and 72 random bits in hex. */
    static String random() {
        byte[] bytes = new byte[9];
        RANDOM.nextBytes(bytes);
        return "s-" + HexFormat.of().formatHex(bytes);
    }

    /** Whether {@code id} could name a session (so it is safe to look up in the store). */
    static boolean wellFormed(String id) {
        return WELL_FORMED.matcher(id).matches();
    }
}

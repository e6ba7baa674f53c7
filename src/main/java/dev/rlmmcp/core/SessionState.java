package dev.rlmmcp.core;

import java.util.Locale;

/** Where a session is in its life. Only an active session takes steps. */
public enum SessionState {
    ACTIVE,
    FINALIZED,
    STOPPED,
    EXPIRED;

    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }
}

package dev.rlmmcp.store;

import java.io.IOException;

/**
 * Cluster mode: this node does not hold the session (its lease lapsed, or another node took the session
 * over), so nothing about the session is read or written here.
 */
public final class NotHeldException extends IOException {

    private static final long serialVersionUID = 1L;

    public NotHeldException(String message) {
        super(message);
    }
}

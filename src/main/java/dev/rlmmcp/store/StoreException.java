package dev.rlmmcp.store;

/** The state directory could not be read or written. */
public final class StoreException extends RuntimeException {

    public StoreException(String message, Throwable cause) {
        super(message, cause);
    }
}

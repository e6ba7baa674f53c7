package dev.rlmmcp.core.kernel;

/** The kernel process ended while a request was in flight: its variables are gone. */
public final class KernelDiedException extends Exception {

    /** Why it ended: killed by us after a timeout that the interrupt did not stop, or on its own. */
    public enum Cause { KILLED_AFTER_TIMEOUT, CRASHED }

    private final Cause cause;
    private final String exit;

    KernelDiedException(Cause cause, String exit, String lastWords) {
        super(describe(cause, exit, lastWords));
        this.cause = cause;
        this.exit = exit;
    }

    private static String describe(Cause cause, String exit, String lastWords) {
        String what = cause == Cause.KILLED_AFTER_TIMEOUT
                ? "the kernel did not stop after the interrupt and was killed"
                : "the kernel process died (" + exit + ")";
        return lastWords.isBlank() ? what : what + "; its last words: " + lastWords.strip();
    }

    public Cause reason() {
        return cause;
    }

    public String exit() {
        return exit;
    }
}

package dev.rlmmcp.kernel.channel;

/** The kernel process ended while a request was in flight: its variables are gone. */
public final class KernelDiedException extends Exception {

    /**
     * Why it ended: killed by us after a timeout that the interrupt did not stop, on its own, killed
     * because it broke the pipe's protocol (a frame too large, not JSON), killed because its
     * process was stopped (SIGSTOP) and could never answer, or killed because it did not answer a
     * request that runs no code of the user's (a snapshot, the variables, memory) in its time limit.
     */
    public enum Cause {
        KILLED_AFTER_TIMEOUT,
        CRASHED,
        PROTOCOL_VIOLATION,
        STOPPED,
        UNANSWERED
    }

    private final Cause cause;
    private final String exit;

    KernelDiedException(Cause cause, String exit, String lastWords) {
        super(describe(cause, exit, lastWords));
        this.cause = cause;
        this.exit = exit;
    }

    private static String describe(Cause cause, String exit, String lastWords) {
        return switch (cause) {
            case PROTOCOL_VIOLATION -> "the kernel broke the protocol: " + lastWords + "; it was killed";
            case STOPPED -> "the kernel's process was stopped (SIGSTOP) and could not answer; it was killed";
            case UNANSWERED -> lastWords;
            case KILLED_AFTER_TIMEOUT, CRASHED -> {
                String what = cause == Cause.KILLED_AFTER_TIMEOUT
                        ? "the kernel did not stop after the interrupt and was killed"
                        : "the kernel process died (" + exit + ")";
                yield lastWords.isBlank() ? what : what + "; its last words: " + lastWords.strip();
            }
        };
    }

    public Cause reason() {
        return cause;
    }

    public String exit() {
        return exit;
    }
}

package dev.rlmmcp.cli;

import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.kernel.KernelFactory;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The start-up check that kernels will run the configured interpreter, made in the background (over
 * stdio, once the client has its tools): a server that cannot run it says why in one line and ends with
 * exit code 2 (over stdio once the client is gone, every call that needs a kernel refused with that line
 * meanwhile), never falling back to another Python.
 */
final class PythonCheck {

    static final int EXIT_CODE = 2;

    private final CompletableFuture<String> problem;
    private final AtomicBoolean printed = new AtomicBoolean();

    private PythonCheck(KernelFactory kernels, CompletableFuture<?> begin) {
        problem = begin.handleAsync(
                (ignored, notBegun) -> {
                    try {
                        kernels.verifyPython();
                        return null;
                    } catch (RlmException e) {
                        return e.getMessage().contains("RLM_PYTHON")
                                ? e.getMessage()
                                : e.getMessage() + " (" + e.fix() + ")";
                    } catch (RuntimeException e) {
                        return "cannot check the Python for kernels: " + e.getMessage()
                                + " (point --python / RLM_PYTHON at "
                                + "a Python 3.10+ interpreter, or use another --sandbox)";
                    }
                },
                Thread::startVirtualThread);
    }

    /** The check, begun once {@code begin} completes (however it does). */
    static PythonCheck start(KernelFactory kernels, CompletableFuture<?> begin) {
        return new PythonCheck(kernels, begin);
    }

    /** Runs {@code then} once the check has passed (never if it fails). */
    void whenPassed(Runnable then) {
        problem.thenAccept(why -> {
            if (why == null) {
                then.run();
            }
        });
    }

    /** False after printing why, if the interpreter cannot run where kernels run. */
    boolean passed() {
        return problem() == null;
    }

    /** Waits for the check: null if it passed, else why not (printed on stderr once, as one line). */
    String problem() {
        String why = problem.join();
        if (why != null && printed.compareAndSet(false, true)) {
            System.err.println("rlm-mcp: " + why);
        }
        return why;
    }
}

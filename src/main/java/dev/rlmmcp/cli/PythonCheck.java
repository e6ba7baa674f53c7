package dev.rlmmcp.cli;

import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.kernel.KernelFactory;
import java.util.concurrent.CompletableFuture;

/**
 * The start-up check that kernels will run the configured interpreter, made while the rest of the
 * server is assembled: a server that cannot run it stops with one line and exit code 2, never falling
 * back to another Python.
 */
final class PythonCheck {

    static final int EXIT_CODE = 2;

    private final CompletableFuture<String> problem;

    private PythonCheck(KernelFactory kernels) {
        problem = CompletableFuture.supplyAsync(() -> {
            try {
                kernels.verifyPython();
                return null;
            } catch (RlmException e) {
                return e.getMessage().contains("RLM_PYTHON") ? e.getMessage() : e.getMessage() + " (" + e.fix() + ")";
            } catch (RuntimeException e) {
                return "cannot check the Python for kernels: " + e.getMessage();
            }
        }, Thread::startVirtualThread);
    }

    static PythonCheck start(KernelFactory kernels) {
        return new PythonCheck(kernels);
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
        String why = problem.join();
        if (why != null) {
            System.err.println("rlm-mcp: " + why);
        }
        return why == null;
    }
}

package dev.rlmmcp.e2e.support;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * What a test opened (servers started with flags of its own, their clients), closed after the test in
 * the reverse order, each even when an earlier one fails to close; a server's processes (kernels, bwrap)
 * are killed if they outlive it, and its log is printed when the test fails.
 *
 * <pre>{@code
 * @RegisterExtension
 * final ClosedAfterEach open = new ClosedAfterEach();
 * ...
 * ServerProcess server = open.add(ServerProcess.http("--state-dir", state.toString()));
 * }</pre>
 */
public final class ClosedAfterEach implements AfterEachCallback, TestWatcher {

    private final List<AutoCloseable> open = new ArrayList<>();
    private final List<ServerProcess> servers = new ArrayList<>();

    /** Registers {@code closeable} to be closed after the test, and returns it. */
    public <T extends AutoCloseable> T add(T closeable) {
        open.add(closeable);
        if (closeable instanceof ServerProcess server) {
            servers.add(server);
        }
        return closeable;
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        Exception first = null;
        for (AutoCloseable c : open.reversed()) {
            List<ProcessHandle> started = c instanceof ServerProcess server
                    ? ProcessHandle.of(server.pid())
                            .map(p -> p.descendants().toList())
                            .orElse(List.of())
                    : List.of();
            try {
                c.close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
            started.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
        }
        open.clear();
        if (first != null) {
            throw first;
        }
    }

    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        for (ServerProcess server : servers) {
            System.err.printf(
                    "--- %s.%s failed; the server %d's log (last %d lines) ---%n%s%n--- end of its log ---%n",
                    context.getRequiredTestClass().getSimpleName(),
                    context.getRequiredTestMethod().getName(),
                    server.pid(),
                    RunningServer.LOG_LINES_ON_FAILURE,
                    server.logTail(RunningServer.LOG_LINES_ON_FAILURE));
        }
    }
}

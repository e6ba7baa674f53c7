package dev.rlmmcp.e2e.support;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * The server a test class runs against, as a JUnit extension: started before the class's first test,
 * stopped after its last, with its processes (kernels, bwrap) killed if they outlive it, and its log
 * printed when a test fails. Optionally with a client connected to it for the whole class.
 *
 * <pre>{@code
 * @TempDir static Path dataRoot;
 * @RegisterExtension
 * static final RunningServer server = RunningServer.http(() -> List.of("--data-root", dataRoot.toString()))
 *         .connect(s -> McpDriver.http(s.mcpUrl()));
 * }</pre>
 *
 * Arguments given as a supplier are read when the class starts, after JUnit has set its static
 * {@code @TempDir} fields.
 */
public final class RunningServer implements BeforeAllCallback, AfterAllCallback, TestWatcher {

    /** Starts the server (null for a stdio server, which its client starts). */
    @FunctionalInterface
    private interface Start {
        ServerProcess start() throws IOException;
    }

    static final int LOG_LINES_ON_FAILURE = 200;

    private final Start start;
    private final Supplier<List<String>> stdioArgs;
    private Function<ServerProcess, McpDriver> connect;
    private ServerProcess process;
    private McpDriver client;

    private RunningServer(Start start, Supplier<List<String>> stdioArgs) {
        this.start = start;
        this.stdioArgs = stdioArgs;
    }

    /** {@code rlm-mcp serve --port 0} with these arguments (see {@link ServerProcess#http(String...)}). */
    public static RunningServer http(String... args) {
        return new RunningServer(() -> ServerProcess.http(args), null);
    }

    /** An HTTP server with these environment variables added, e.g. RLM_API_KEY. */
    public static RunningServer http(Map<String, String> env, String... args) {
        return new RunningServer(() -> ServerProcess.http(env, args), null);
    }

    /** An HTTP server whose arguments are known only when the class starts. */
    public static RunningServer http(Supplier<List<String>> args) {
        return http(Map.of(), args);
    }

    public static RunningServer http(Map<String, String> env, Supplier<List<String>> args) {
        return new RunningServer(() -> ServerProcess.http(env, args.get().toArray(String[]::new)), null);
    }

    /** The HTTP server with the conformance suite's fixture tools (see {@link ServerProcess#httpWithFixtures}). */
    public static RunningServer httpWithFixtures(String... args) {
        return new RunningServer(() -> ServerProcess.httpWithFixtures(args), null);
    }

    /**
     * {@code rlm-mcp stdio} with these arguments, run by the official client that {@link #client()} returns
     * (a stdio server lives and dies with its client).
     */
    public static RunningServer stdio(Supplier<List<String>> args) {
        return new RunningServer(null, args);
    }

    /** Connects {@code client} to the server once it runs; closed before the server stops. */
    public RunningServer connect(Function<ServerProcess, McpDriver> client) {
        if (start == null) {
            throw new IllegalStateException("a stdio server comes with its client");
        }
        this.connect = client;
        return this;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws IOException {
        if (start == null) {
            List<String> args = new ArrayList<>(List.of("stdio"));
            args.addAll(stdioArgs.get());
            client = McpDriver.stdio(ServerProcess.command(args));
            return;
        }
        process = start.start();
        if (connect != null) {
            client = connect.apply(process);
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        List<ProcessHandle> started = new ArrayList<>();
        if (process != null) {
            ProcessHandle.of(process.pid())
                    .ifPresent(p -> started.addAll(p.descendants().toList()));
        }
        if (client != null) {
            client.close();
        }
        if (process != null) {
            process.close();
        }
        started.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
    }

    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        List<String> lines = (process != null ? process.log() : client != null ? client.stderr() : "")
                .lines()
                .toList();
        String test = context.getRequiredTestClass().getSimpleName() + "."
                + context.getRequiredTestMethod().getName() + " " + context.getDisplayName();
        System.err.printf(
                "--- %s failed; the server's log (last %d lines) ---%n%s%n--- end of the server's log ---%n",
                test,
                LOG_LINES_ON_FAILURE,
                String.join("\n", lines.subList(Math.max(0, lines.size() - LOG_LINES_ON_FAILURE), lines.size())));
    }

    /** The running HTTP server. */
    public ServerProcess process() {
        if (process == null) {
            throw new IllegalStateException(
                    start == null
                            ? "a stdio server has no process of its own here"
                            : "the server starts before the class's first test");
        }
        return process;
    }

    public String baseUrl() {
        return process().baseUrl();
    }

    public String mcpUrl() {
        return process().mcpUrl();
    }

    public long pid() {
        return process().pid();
    }

    public String log() {
        return process().log();
    }

    /** The client connected for the class (see {@link #connect}, {@link #stdio}). */
    public McpDriver client() {
        if (client == null) {
            throw new IllegalStateException("no client connected: use connect(...) or stdio(...)");
        }
        return client;
    }
}

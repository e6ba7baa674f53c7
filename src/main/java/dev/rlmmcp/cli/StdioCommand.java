package dev.rlmmcp.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.rlm.RlmConfig;
import dev.rlmmcp.store.StateStore;
import dev.rlmmcp.transport.McpServers;
import dev.rlmmcp.transport.stdio.StartupAnswers;
import dev.rlmmcp.transport.stdio.StdioEndpoint;
import dev.rlmmcp.transport.stdio.StdioFront;
import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
        name = "stdio",
        mixinStandardHelpOptions = true,
        description = "Serve MCP over stdin/stdout (for Claude Code, Codex, Cursor...). Logs go to stderr.")
final class StdioCommand implements Callable<Integer> {

    /** Longest the start's background work waits for a client that does not list the tools. */
    private static final Duration BEGIN_AT_THE_LATEST = Duration.ofMillis(500);

    @Spec
    CommandSpec spec;

    @Mixin
    KernelOptions kernel;

    @Mixin
    LlmOptions llm;

    @Mixin
    DataOptions data;

    @Mixin
    RlmOptions rlm;

    @Option(
            names = "--max-request-mb",
            paramLabel = "MB",
            defaultValue = "${env:RLM_MAX_REQUEST_MB:-512}",
            description =
                    "Largest single MCP message accepted, e.g. for inline rlm_load_data (RLM_MAX_REQUEST_MB; default: ${DEFAULT-VALUE}).")
    int maxRequestMb;

    /** Served next to rlm-mcp's own tools and prompt: set by a program that embeds rlm-mcp (see {@link Main#run}). */
    McpServers.Features extra = McpServers.Features.NONE;

    /** The answers an earlier start with this configuration gave at start-up, and where this one's are kept (see {@link Main#main}). */
    StartupAnswers answers = StartupAnswers.none();

    /** What has read stdin since the JVM started and answered from {@link #answers}, or null. */
    StdioFront front;

    @Override
    public Integer call() throws InterruptedException {
        KernelOptions.require(spec, maxRequestMb >= 1 && maxRequestMb <= 2047, "--max-request-mb must be 1..2047");
        Settings settings = kernel.settings(spec);
        ObjectMapper json = Assembly.mapper();
        RlmConfig rlmConfig = rlm.config(spec, json);
        // the Python check, warm kernels and the state store begin once the client has its tools, and the state
        // directory is chosen once they are made: all would take the cores from the answers an agent client
        // waits for (Codex gives a server a second before its first turn)
        CompletableFuture<Void> begin = new CompletableFuture<>();
        CompletableFuture<StateStore> store = new CompletableFuture<>();
        Duration shutdownTimeout = kernel.shutdownTimeout(spec);
        PrintStream protocol = System.out;
        System.setOut(System.err);
        Assembly app = Assembly.of(
                settings,
                kernel.hostPolicy(spec, settings),
                json,
                new Assembly.Parts(
                        llm.service(spec, json, rlm.maxDepth(spec)),
                        new Assembly.Bridge(kernel.mcpLocations(spec), kernel.mcpIdleTimeout()),
                        data.sources(spec, kernel.snapshotArea()),
                        store,
                        kernel.defaultLimits(),
                        extra,
                        rlmConfig,
                        begin));
        if (front != null) {
            front.offer(app.servers()); // a first start's tools, before the SDK server is built
        }
        try {
            open(store, begin);
            // initialize and the lists are answered at once; calls that need a kernel wait for the check
            CompletableFuture<Void> checked = new CompletableFuture<>();
            StdioEndpoint endpoint = endpoint(app, protocol, checked);
            beginOnceListed(endpoint, begin);
            // SIGTERM or SIGINT: the sessions are saved as at the end of stdin
            Runtime.getRuntime().addShutdownHook(new Thread(() -> app.close(shutdownTimeout), "shutdown"));
            String problem = check(app, checked);
            try (endpoint) {
                endpoint.awaitClientGone();
            }
            return problem == null ? 0 : PythonCheck.EXIT_CODE;
        } finally {
            app.close(shutdownTimeout);
        }
    }

    /** Waits for the Python check and completes {@code checked} with it; returns its problem, or null. */
    private static String check(Assembly app, CompletableFuture<Void> checked) {
        String problem = app.python().problem();
        if (problem == null) {
            checked.complete(null);
        } else {
            checked.completeExceptionally(new IllegalStateException("rlm-mcp cannot start kernels: " + problem));
        }
        return problem;
    }

    /** The stdio server, on the streams the front read first if there is one. */
    private StdioEndpoint endpoint(Assembly app, PrintStream protocol, CompletableFuture<Void> checked) {
        int max = maxRequestMb * 1024 * 1024;
        return front == null
                ? new StdioEndpoint(app.servers(), System.in, protocol, max, checked, answers)
                : new StdioEndpoint(app.servers(), front.input(), front.output(), max, checked, answers);
    }

    /** Opens the state store into {@code store}; a refused state directory leaves it null, for the stop that follows. */
    private void open(CompletableFuture<StateStore> store, CompletableFuture<Void> begin) {
        try {
            kernel.store(spec, data, null, begin).whenComplete((opened, failed) -> {
                if (failed == null) {
                    store.complete(opened);
                } else {
                    store.completeExceptionally(failed);
                }
            });
        } catch (RuntimeException e) {
            store.complete(null);
            throw e;
        }
    }

    /** Completes {@code begin} once the client has its tools, or after {@link #BEGIN_AT_THE_LATEST}. */
    private static void beginOnceListed(StdioEndpoint endpoint, CompletableFuture<Void> begin) {
        endpoint.listed().thenRun(() -> begin.complete(null));
        CompletableFuture.delayedExecutor(BEGIN_AT_THE_LATEST.toMillis(), TimeUnit.MILLISECONDS)
                .execute(() -> begin.complete(null));
    }
}

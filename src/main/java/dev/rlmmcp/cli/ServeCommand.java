package dev.rlmmcp.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.cluster.ClusterNode;
import dev.rlmmcp.cluster.ClusterSettings;
import dev.rlmmcp.core.Ownership;
import dev.rlmmcp.kernel.HostPolicy;
import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.rlm.RlmConfig;
import dev.rlmmcp.store.StateStore;
import dev.rlmmcp.transport.McpServers;
import dev.rlmmcp.transport.http.ApiKey;
import dev.rlmmcp.transport.http.HttpEndpoint;
import dev.rlmmcp.transport.http.HttpSettings;
import dev.rlmmcp.transport.http.PeerChannel;
import dev.rlmmcp.transport.http.PortFile;
import java.net.BindException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

@Command(
        name = "serve",
        mixinStandardHelpOptions = true,
        description = {
            "Serve MCP over HTTP on one port: Streamable HTTP at /mcp, legacy SSE at /sse + /message, "
                    + "plain JSON at /rpc, health at /healthz and /health.",
            "Set RLM_API_KEY in the environment to require Authorization: Bearer <key> on every path but /healthz."
        })
final class ServeCommand implements Callable<Integer> {

    private static final Logger log = LoggerFactory.getLogger(ServeCommand.class);

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

    @Mixin
    ClusterOptions cluster;

    @Option(
            names = "--host",
            paramLabel = "ADDR",
            defaultValue = "${env:RLM_HOST:-127.0.0.1}",
            description =
                    "Address to listen on (RLM_HOST; default: ${DEFAULT-VALUE}). Any non-loopback address needs RLM_API_KEY.")
    String host;

    @Option(
            names = "--port",
            paramLabel = "PORT",
            defaultValue = "${env:RLM_PORT:-8765}",
            description = "Port to listen on, 0 for any free port (RLM_PORT; default: ${DEFAULT-VALUE}).")
    int port;

    @Option(
            names = "--port-file",
            paramLabel = "FILE",
            defaultValue = "${env:RLM_PORT_FILE}",
            description = "Write the port taken to FILE (mode 0600), removed at shutdown (RLM_PORT_FILE).")
    Path portFile;

    @Option(
            names = "--max-request-mb",
            paramLabel = "MB",
            defaultValue = "${env:RLM_MAX_REQUEST_MB:-4}",
            description =
                    "Largest HTTP request body accepted; bigger ones get 413 (RLM_MAX_REQUEST_MB; default: ${DEFAULT-VALUE}).")
    int maxRequestMb;

    @Option(
            names = "--allowed-hosts",
            paramLabel = "NAMES",
            split = ",",
            defaultValue = "${env:RLM_ALLOWED_HOSTS}",
            description =
                    "Host header names accepted besides localhost, 127.0.0.1 and [::1] (DNS rebinding protection; RLM_ALLOWED_HOSTS, comma-separated).")
    String[] allowedHosts;

    @Option(
            names = "--cors-origins",
            paramLabel = "ORIGINS",
            split = ",",
            defaultValue = "${env:RLM_CORS_ORIGINS}",
            description =
                    "Browser origins allowed to call, e.g. https://app.example.com (RLM_CORS_ORIGINS, comma-separated; default: none).")
    String[] corsOrigins;

    @Option(
            names = "--session-idle-s",
            paramLabel = "S",
            defaultValue = "${env:RLM_SESSION_IDLE_S:-1800}",
            description =
                    "Seconds an MCP HTTP session (Mcp-Session-Id) may go unused before it is ended (RLM_SESSION_IDLE_S; default: ${DEFAULT-VALUE}).")
    long sessionIdleS;

    @Option(
            names = "--sse-keepalive-s",
            paramLabel = "S",
            defaultValue = "${env:RLM_SSE_KEEPALIVE_S:-15}",
            description =
                    "Seconds between keep-alive comments on an idle /sse stream, 1..30 (RLM_SSE_KEEPALIVE_S; default: ${DEFAULT-VALUE}).")
    long sseKeepAliveS;

    @Option(
            names = "--allow-unsandboxed",
            defaultValue = "${env:RLM_ALLOW_UNSANDBOXED:-false}",
            description = "Allow --sandbox process (no isolation) on a non-loopback --host (RLM_ALLOW_UNSANDBOXED).")
    boolean allowUnsandboxed;

    @Option(
            names = "--allow-no-auth",
            defaultValue = "${env:RLM_ALLOW_NO_AUTH:-false}",
            description =
                    "Listen on a non-loopback --host without RLM_API_KEY: anyone who can reach the port runs code (RLM_ALLOW_NO_AUTH).")
    boolean allowNoAuth;

    /** Served next to rlm-mcp's own tools and prompt: set by a program that embeds rlm-mcp (see {@link Main#run}). */
    McpServers.Features extra = McpServers.Features.NONE;

    @Override
    public Integer call() throws Exception {
        checkRanges();
        Duration shutdownTimeout = kernel.shutdownTimeout(spec);
        Set<String> origins = list(corsOrigins);
        KernelOptions.require(
                spec,
                !origins.contains("*"),
                "--cors-origins must list origins; * (any site, with credentials) is not allowed");
        ApiKey apiKey = ApiKey.of(System.getenv("RLM_API_KEY"));
        boolean loopback = HttpEndpoint.isLoopback(host);
        checkAuthentication(loopback, apiKey);
        Settings settings = kernel.settings(spec);
        ObjectMapper json = Assembly.mapper();
        RlmConfig rlmConfig = rlm.config(spec, json);
        ClusterSettings clusterSettings = cluster.settings(spec, kernel, System.getenv());
        HostPolicy policy = kernel.hostPolicy(spec, settings);
        checkSandboxed(policy, loopback);
        HttpSettings http = httpSettings(apiKey, origins, shutdownTimeout);
        ClusterNode node = clusterSettings == null ? null : ClusterOptions.join(spec, clusterSettings);
        CompletableFuture<StateStore> store = kernel.store(spec, data, node == null ? null : node.database());
        Assembly app = Assembly.of(
                settings,
                policy,
                json,
                new Assembly.Parts(
                        llm.service(spec, json, rlm.maxDepth(spec)),
                        new Assembly.Bridge(kernel.mcpLocations(spec), kernel.mcpIdleTimeout()),
                        data.sources(spec, kernel.snapshotArea()),
                        store,
                        kernel.defaultLimits(),
                        extra,
                        rlmConfig),
                node == null ? Ownership.SINGLE_NODE : node.ownership());
        HttpEndpoint endpoint = new HttpEndpoint(app.servers(), app.sessions(), app.json(), http, peers(node));
        if (!app.python().passed()) {
            app.close();
            ClusterRun.close(node);
            return PythonCheck.EXIT_CODE;
        }
        ClusterRun.start(node, app.sessions());
        started(endpoint, app);
        int bound = endpoint.address().getPort();
        closedAtShutdown(
                new ClusterRun(node, endpoint, app),
                portFile == null ? null : PortFile.write(portFile, bound),
                shutdownTimeout);
        logListening(app, bound, apiKey, node);
        endpoint.join();
        return 0;
    }

    /** Kernels without a sandbox run code with the server's rights: on a port others reach, only if asked for. */
    private void checkSandboxed(HostPolicy policy, boolean loopback) {
        KernelOptions.require(
                spec,
                !policy.launcher().name().equals("process") || allowUnsandboxed || loopback,
                "kernels would run unsandboxed (--sandbox process) on a non-loopback --host " + host
                        + ": install bubblewrap, or pass --allow-unsandboxed if every client is trusted");
    }

    private HttpSettings httpSettings(ApiKey apiKey, Set<String> origins, Duration shutdownTimeout) {
        return new HttpSettings(
                host,
                port,
                maxRequestMb * 1024 * 1024,
                apiKey,
                list(allowedHosts),
                origins,
                Duration.ofSeconds(sessionIdleS),
                Duration.ofSeconds(sseKeepAliveS),
                portFile,
                shutdownTimeout);
    }

    private void logListening(Assembly app, int bound, ApiKey apiKey, ClusterNode node) {
        log.info(
                "rlm-mcp listening on http://{}:{}/mcp (also /sse, /rpc, /healthz, /health; auth: {}, data root: {}, "
                        + "sandbox: {}{}{})",
                host,
                bound,
                apiKey == null ? "off" : "bearer key",
                app.sessions().kernels().settings().dataRoot(),
                app.sessions().kernels().launcherName(),
                extra.equals(McpServers.Features.NONE) ? "" : ", extra MCP features on",
                node == null
                        ? ""
                        : ", cluster node " + node.nodeId() + ", peers at "
                                + node.settings().nodeAddress());
    }

    private void checkRanges() {
        KernelOptions.require(spec, port >= 0 && port <= 65535, "--port must be 0..65535, not " + port);
        KernelOptions.require(spec, maxRequestMb >= 1 && maxRequestMb <= 2047, "--max-request-mb must be 1..2047");
        KernelOptions.require(spec, sessionIdleS >= 1, "--session-idle-s must be at least 1");
        KernelOptions.require(spec, sseKeepAliveS >= 1 && sseKeepAliveS <= 30, "--sse-keepalive-s must be 1..30");
    }

    /** A port others can reach runs code for anyone who reaches it, so it needs a key or an explicit flag. */
    private void checkAuthentication(boolean loopback, ApiKey apiKey) {
        KernelOptions.require(
                spec,
                loopback || apiKey != null || allowNoAuth,
                "refusing to listen on non-loopback --host " + host + " without an API key: set RLM_API_KEY "
                        + "(clients then send Authorization: Bearer <key>), or pass --allow-no-auth if every "
                        + "host that can reach this port is trusted");
        if (!loopback && apiKey == null) {
            log.warn(
                    "!!! --allow-no-auth: listening on {} WITHOUT authentication; anyone who can reach this port "
                            + "can run code in the kernels !!!",
                    host);
        }
    }

    /** Starts listening; when that fails, the server and the app are closed before the failure is told. */
    private void started(HttpEndpoint endpoint, Assembly app) throws Exception {
        try {
            endpoint.start();
        } catch (Exception e) {
            try {
                endpoint.close();
            } finally {
                app.close();
            }
            throw cannotListen(e);
        }
    }

    /** In cluster mode, the peer listener on --node-address and the routing of requests; null on one node. */
    private static PeerChannel peers(ClusterNode node) {
        return node == null
                ? null
                : new PeerChannel(
                        node.router(),
                        node.homes(),
                        node.auth(),
                        node.settings().peerHost(),
                        node.settings().peerPort());
    }

    /**
     * At JVM shutdown: a cluster node hands its sessions over first; the server stops taking requests,
     * then the kernels stop, then the port file goes.
     */
    private static void closedAtShutdown(ClusterRun run, PortFile written, Duration shutdownTimeout) {
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            try {
                                run.close(shutdownTimeout);
                            } finally {
                                if (written != null) {
                                    written.close();
                                }
                            }
                        },
                        "shutdown"));
    }

    /** A port in use or an address not of this host is a bad flag: one line naming it, exit code 2. */
    private Exception cannotListen(Exception e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof BindException bind) {
                String why = String.valueOf(bind.getMessage()).toLowerCase(Locale.ROOT);
                String hint = why.contains("in use")
                        ? "address already in use: stop what holds the port, or pick another with --port (0: any free port)"
                        : why + ": check --host";
                return new ParameterException(
                        spec.commandLine(),
                        "cannot listen on " + host + ":" + port + ": " + hint,
                        spec.findOption(why.contains("in use") ? "--port" : "--host"),
                        String.valueOf(port));
            }
        }
        return e;
    }

    private static Set<String> list(String[] values) {
        return values == null
                ? Set.of()
                : Arrays.stream(values)
                        .map(String::strip)
                        .filter(v -> !v.isEmpty())
                        .collect(Collectors.toSet());
    }
}

package dev.rlmmcp.cli;

import dev.rlmmcp.core.Settings;
import dev.rlmmcp.core.kernel.KernelLauncher;
import dev.rlmmcp.face.HttpFace;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Serve MCP over HTTP: Streamable HTTP at /mcp, health at /health.")
final class ServeCommand implements Callable<Integer> {

    private static final Logger log = LoggerFactory.getLogger(ServeCommand.class);

    @Spec
    CommandSpec spec;

    @Mixin
    KernelOptions kernel;

    @Option(names = "--host", paramLabel = "ADDR", defaultValue = "${env:RLM_HOST:-127.0.0.1}",
            description = "Address to listen on (RLM_HOST; default: ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--port", paramLabel = "PORT", defaultValue = "${env:RLM_PORT:-8765}",
            description = "Port to listen on, 0 for any free port (RLM_PORT; default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--max-request-mb", paramLabel = "MB", defaultValue = "${env:RLM_MAX_REQUEST_MB:-4}",
            description = "Largest HTTP request body accepted; bigger ones get 413 (RLM_MAX_REQUEST_MB; default: ${DEFAULT-VALUE}).")
    int maxRequestMb;

    @Option(names = "--allow-unsandboxed", defaultValue = "${env:RLM_ALLOW_UNSANDBOXED:-false}",
            description = "Allow --sandbox process (no isolation) on a non-loopback --host (RLM_ALLOW_UNSANDBOXED).")
    boolean allowUnsandboxed;

    @Override
    public Integer call() throws Exception {
        KernelOptions.require(spec, port >= 0 && port <= 65535, "--port must be 0..65535, not " + port);
        KernelOptions.require(spec, maxRequestMb >= 1 && maxRequestMb <= 2047, "--max-request-mb must be 1..2047");
        Settings settings = kernel.settings(spec);
        KernelLauncher launcher = kernel.launcher(spec, settings);
        KernelOptions.require(spec, !launcher.name().equals("process") || allowUnsandboxed || isLoopback(host),
                "kernels would run unsandboxed (--sandbox process) on a non-loopback --host " + host
                        + ": install bubblewrap, or pass --allow-unsandboxed if every client is trusted");
        Assembly app = Assembly.of(settings, launcher, kernel.store(spec));
        HttpFace http = new HttpFace(app.servers(), app.sessions(), app.json(), host, port, maxRequestMb * 1024 * 1024);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                http.close();
            } finally {
                app.close();
            }
        }, "shutdown"));
        http.start();
        log.info("rlm-mcp listening on http://{}:{}/mcp (health: /health, data root: {}, sandbox: {})",
                host, http.address().getPort(), app.sessions().kernels().settings().dataRoot(),
                app.sessions().kernels().launcherName());
        http.join();
        return 0;
    }

    private static boolean isLoopback(String host) {
        try {
            return java.net.InetAddress.getByName(host).isLoopbackAddress();
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }
}

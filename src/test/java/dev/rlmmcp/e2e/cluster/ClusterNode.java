package dev.rlmmcp.e2e.cluster;

import dev.rlmmcp.e2e.support.ServerProcess;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One node: {@code rlm-mcp serve} with the cluster options, run in its network namespace, on its public
 * address and with its peer address. It can be killed (SIGKILL, kernels too, as when a machine dies),
 * stopped (SIGTERM: the node hands its sessions over) and started again (a new process, so a new node id).
 */
public final class ClusterNode implements AutoCloseable {

    /** A system property: the launcher (bin/rlm-mcp) to start nodes with, rather than {@code java -jar}. */
    static final String LAUNCHER = "rlm.launcher";

    private final int index;
    private final List<String> prefix;
    private final String host;
    private final int port;
    private final String nodeAddress;
    private final List<String> options;
    private final Map<String, String> env;
    private final Path stateDir;
    private final StringBuffer log = new StringBuffer();
    private Process process;

    ClusterNode(
            int index,
            List<String> prefix,
            String host,
            int port,
            String nodeAddress,
            List<String> options,
            Map<String, String> env,
            Path stateDir) {
        this.index = index;
        this.prefix = prefix;
        this.host = host;
        this.port = port;
        this.nodeAddress = nodeAddress;
        this.options = options;
        this.env = env;
        this.stateDir = stateDir;
    }

    /** Starts the process and returns once it listens (60 s at most). */
    public synchronized void start() {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException("node " + index + " is running");
        }
        List<String> args = new ArrayList<>(List.of(
                "serve",
                "--host",
                host,
                "--port",
                String.valueOf(port),
                "--state-dir",
                stateDir.toString(),
                "--allow-no-auth"));
        args.addAll(options);
        List<String> command = new ArrayList<>(prefix);
        String launcher = System.getProperty(LAUNCHER);
        if (launcher == null) {
            command.addAll(ServerProcess.command(args));
        } else { // as users start a node: its JVM options and start-up cache (bin/bench)
            command.add(launcher);
            command.addAll(args);
        }
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().remove("RLM_API_KEY");
        builder.environment().putAll(env);
        log.append("---- start ").append(java.time.Instant.now()).append('\n');
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        CompletableFuture<Void> listening = follow(process);
        try {
            listening.get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            kill();
            throw new IllegalStateException("node " + index + " did not start: " + e.getMessage() + "\n" + log, e);
        }
    }

    private CompletableFuture<Void> follow(Process started) {
        CompletableFuture<Void> listening = new CompletableFuture<>();
        Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader reader =
                    new BufferedReader(new InputStreamReader(started.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    log.append(line).append('\n');
                    if (line.contains("listening on http://")) {
                        listening.complete(null);
                    }
                }
            } catch (IOException e) {
                listening.completeExceptionally(e);
            }
            listening.completeExceptionally(new IllegalStateException("exited"));
        });
        return listening;
    }

    /** kill -9 of the node and of its kernels (as when its machine dies); returns when they are gone. */
    public synchronized void kill() {
        if (process == null) {
            return;
        }
        List<ProcessHandle> kernels = process.descendants().toList();
        process.destroyForcibly();
        kernels.forEach(ProcessHandle::destroyForcibly);
        try {
            process.waitFor(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        log.append("---- killed\n");
    }

    /** SIGTERM (as a service manager stops it); returns its exit status once it has exited. */
    public synchronized int stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(90, TimeUnit.SECONDS)) {
            kill();
            throw new IllegalStateException("node " + index + " did not stop within 90 s after SIGTERM:\n" + log);
        }
        log.append("---- stopped: ").append(process.exitValue()).append('\n');
        return process.exitValue();
    }

    public int index() {
        return index;
    }

    /** The public base URL, e.g. http://10.230.7.11:8765. */
    public String url() {
        return "http://" + host + ":" + port;
    }

    /** host:port of the public connector, as nginx's upstream lists it. */
    public String publicAddress() {
        return host + ":" + port;
    }

    /** host:port of the peer channel (--node-address), as rlm_nodes has it. */
    public String nodeAddress() {
        return nodeAddress;
    }

    public synchronized boolean alive() {
        return process != null && process.isAlive();
    }

    public synchronized long pid() {
        return process.pid();
    }

    public String log() {
        return log.toString();
    }

    @Override
    public void close() {
        kill();
    }
}

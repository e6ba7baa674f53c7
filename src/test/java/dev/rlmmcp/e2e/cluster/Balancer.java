package dev.rlmmcp.e2e.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Debian's nginx in front of the nodes, in the root namespace on 127.0.0.1 and a free port, with the
 * shipped deploy/nginx/rlm-mcp.conf: its upstream's server lines replaced by the nodes given (each line's
 * parameters kept), its listen line by the port, and without hashing its {@code hash} line dropped (plain
 * round robin, as the file's comment says).
 */
public final class Balancer implements AutoCloseable {

    /** The shipped configuration, found from the project directory (the working directory of tests and bench). */
    public static final Path SHIPPED = Path.of("deploy/nginx/rlm-mcp.conf");

    private static final Pattern SERVER = Pattern.compile("(?m)^(\\s*)server\\s+\\S+:\\d+(\\s[^;]*)?;\\s*\\n");
    private static final Pattern UPSTREAM = Pattern.compile("(?ms)^upstream\\s+\\S+\\s*\\{.*?^\\}");
    private static final Pattern LISTEN = Pattern.compile("(?m)^\\s*listen\\s+8080;");
    private static final Pattern HASH =
            Pattern.compile("(?m)^\\s*hash\\s+\\$rlm_route\\$rlm_new_session\\s+consistent;\\s*\\n");

    private final Process process;
    private final int port;
    private final Path dir;

    private Balancer(Process process, int port, Path dir) {
        this.process = process;
        this.port = port;
        this.dir = dir;
    }

    /** nginx over these nodes' public addresses (host:port), consistent hashing or round robin. */
    public static Balancer start(Path dir, List<String> upstreams, boolean hashing) throws IOException {
        Files.createDirectories(dir);
        int port = freePort();
        Files.writeString(dir.resolve("rlm-mcp.conf"), render(Files.readString(SHIPPED), upstreams, hashing, port));
        Files.writeString(
                dir.resolve("nginx.conf"),
                String.join(
                        "\n",
                        "pid " + dir.resolve("nginx.pid") + ";",
                        "error_log " + dir.resolve("error.log") + " warn;",
                        "worker_processes 2;",
                        "events { worker_connections 8192; }",
                        "http {",
                        "  access_log off;",
                        "  client_body_temp_path " + dir.resolve("body") + ";",
                        "  proxy_temp_path " + dir.resolve("proxy") + ";",
                        "  include " + dir.resolve("rlm-mcp.conf") + ";",
                        "}",
                        ""));
        Shell.must(
                "/usr/sbin/nginx",
                "-q",
                "-t",
                "-p",
                dir.toString(),
                "-c",
                dir.resolve("nginx.conf").toString());
        Process process = new ProcessBuilder(
                        "/usr/sbin/nginx",
                        "-p",
                        dir.toString(),
                        "-c",
                        dir.resolve("nginx.conf").toString(),
                        "-g",
                        "daemon off;")
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("stdout.log").toFile())
                .start();
        Balancer balancer = new Balancer(process, port, dir);
        balancer.awaitListening();
        return balancer;
    }

    /** The shipped file with these upstreams (in each of its upstream blocks), this port, with or without hashing. */
    static String render(String shipped, List<String> upstreams, boolean hashing, int port) {
        Matcher blocks = UPSTREAM.matcher(shipped);
        StringBuilder config = new StringBuilder();
        int upstreamBlocks = 0;
        while (blocks.find()) {
            blocks.appendReplacement(config, Matcher.quoteReplacement(servers(blocks.group(), upstreams)));
            upstreamBlocks++;
        }
        blocks.appendTail(config);
        require(upstreamBlocks > 0, "upstream rlm_mcp {");
        String rendered = config.toString();
        require(LISTEN.matcher(rendered).find(), "listen 8080;");
        rendered = LISTEN.matcher(rendered).replaceFirst("    listen 127.0.0.1:" + port + ";");
        require(HASH.matcher(rendered).find(), "hash $rlm_route$rlm_new_session consistent;");
        return hashing ? rendered : HASH.matcher(rendered).replaceFirst("");
    }

    /** One upstream block with its server lines replaced by these nodes, each with the first line's parameters. */
    private static String servers(String block, List<String> upstreams) {
        Matcher servers = SERVER.matcher(block);
        if (!servers.find()) {
            throw new IllegalStateException(SHIPPED + " has an upstream without a `server host:port ...;` line");
        }
        String indent = servers.group(1);
        String params = servers.group(2) == null ? "" : servers.group(2);
        int first = servers.start();
        String without = SERVER.matcher(block).replaceAll("");
        String lines = upstreams.stream()
                .map(u -> indent + "server " + u + params + ";\n")
                .collect(Collectors.joining());
        return without.substring(0, first) + lines + without.substring(first);
    }

    private static void require(boolean found, String line) {
        if (!found) {
            throw new IllegalStateException(SHIPPED + " has no line `" + line + "`, which the cluster tests rewrite");
        }
    }

    public String url() {
        return "http://127.0.0.1:" + port;
    }

    /** nginx's error log (upstream failures, retries). */
    public String errorLog() {
        try {
            return Files.readString(dir.resolve("error.log"), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return e.toString();
        }
    }

    private void awaitListening() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("nginx exited: " + errorLog());
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return;
            } catch (IOException notYet) {
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            }
        }
        close();
        throw new IllegalStateException("nginx did not listen within 20 s: " + errorLog());
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        process.destroy(); // SIGTERM: nginx's fast shutdown, workers included
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.descendants().forEach(ProcessHandle::destroyForcibly);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}

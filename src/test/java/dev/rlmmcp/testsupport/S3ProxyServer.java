package dev.rlmmcp.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real S3 server for tests and benchmarks: S3Proxy (the jar-with-dependencies Maven copies to
 * target/s3proxy/s3proxy.jar) run as a process on 127.0.0.1 and a free port, with the filesystem
 * backend in a directory of the caller's, and SigV4 credentials. A bucket is a directory of that
 * backend and an object a file in it, so tests can also lay out large objects directly.
 * {@code main} runs one for bin/bench: it prints the endpoint and stops when stdin closes.
 */
public final class S3ProxyServer implements AutoCloseable {

    public static final String ACCESS_KEY = "rlm-test-access";
    public static final String SECRET_KEY = "rlm-test-secret-0b5d";

    private Process process;
    private List<String> command = List.of();
    private final Path baseDir;
    private final int port;
    private final Path log;

    private final String address;

    private S3ProxyServer(Process process, Path baseDir, String address, int port, Path log) {
        this.process = process;
        this.address = address;
        this.baseDir = baseDir;
        this.port = port;
        this.log = log;
    }

    /** Starts S3Proxy with its objects under {@code baseDir}; returns once it accepts connections. */
    public static S3ProxyServer start(Path baseDir) throws IOException {
        return start(baseDir, "127.0.0.1");
    }

    /** Starts S3Proxy listening on {@code address} (an address of this host, e.g. a bridge's). */
    public static S3ProxyServer start(Path baseDir, String address) throws IOException {
        Path jar = jar();
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar + " is missing: run ./mvnw process-test-resources to fetch S3Proxy");
        }
        Files.createDirectories(baseDir);
        int port = freePort();
        Path config = baseDir.resolveSibling(baseDir.getFileName() + "-s3proxy.properties");
        Files.writeString(
                config,
                String.join(
                        "\n",
                        "s3proxy.endpoint=http://" + address + ":" + port,
                        "s3proxy.authorization=aws-v2-or-v4",
                        "s3proxy.identity=" + ACCESS_KEY,
                        "s3proxy.credential=" + SECRET_KEY,
                        "jclouds.provider=filesystem",
                        "jclouds.filesystem.basedir=" + baseDir.toAbsolutePath(),
                        ""),
                StandardCharsets.UTF_8);
        Path log = baseDir.resolveSibling(baseDir.getFileName() + "-s3proxy.log");
        String java = ProcessHandle.current().info().command().orElse("java");
        Process process = new ProcessBuilder(
                        java, "-Xmx512m", "-XX:+UseSerialGC", "-jar", jar.toString(), "--properties", config.toString())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        S3ProxyServer server = new S3ProxyServer(process, baseDir, address, port, log);
        server.command = List.of(
                java, "-Xmx512m", "-XX:+UseSerialGC", "-jar", jar.toString(), "--properties", config.toString());
        server.awaitListening();
        return server;
    }

    public static Path jar() {
        return Path.of(System.getProperty("s3proxy.jar", "target/s3proxy/s3proxy.jar"))
                .toAbsolutePath();
    }

    public String endpoint() {
        return "http://" + address + ":" + port;
    }

    public int port() {
        return port;
    }

    /** The environment that points rlm-mcp at this server. */
    public Map<String, String> env() {
        return Map.of("MINIO_ENDPOINT", endpoint(), "MINIO_ACCESS_KEY", ACCESS_KEY, "MINIO_SECRET_KEY", SECRET_KEY);
    }

    /** Creates a bucket by making its directory in the backend. */
    public Path bucket(String name) throws IOException {
        return Files.createDirectories(baseDir.resolve(name));
    }

    /** Writes an object straight into the backend: quick for large test objects. */
    public Path object(String bucket, String key, byte[] content) throws IOException {
        Path file = baseDir.resolve(bucket).resolve(key);
        Files.createDirectories(file.getParent());
        return Files.write(file, content);
    }

    public Path baseDir() {
        return baseDir;
    }

    private void awaitListening() throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("S3Proxy exited: " + Files.readString(log));
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(address, port), 200);
                return;
            } catch (IOException notYet) {
                sleep(100);
            }
        }
        close();
        throw new IllegalStateException("S3Proxy did not listen within 60 s: " + Files.readString(log));
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Stops S3Proxy (an outage of S3); {@link #startAgain} brings it back on the same address and files. */
    public synchronized void stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Starts S3Proxy again after {@link #stop}. */
    public synchronized void startAgain() throws IOException {
        process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        awaitListening();
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** For bin/bench: {@code S3ProxyServer DIR} prints {@code endpoint=URL} and runs until stdin closes. */
    public static void main(String[] args) throws IOException {
        try (S3ProxyServer server = start(Path.of(args[0]))) {
            System.out.println("endpoint=" + server.endpoint());
            System.out.println("pid=" + server.process.pid());
            System.out.flush();
            while (System.in.read() >= 0) {
                // wait for the caller to close stdin
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }
}

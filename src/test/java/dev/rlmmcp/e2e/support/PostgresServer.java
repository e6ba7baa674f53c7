package dev.rlmmcp.e2e.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real PostgreSQL for tests: Debian's PostgreSQL 15 ({@code /usr/lib/postgresql/15/bin}, or the
 * directory in the system property {@code postgres.bin}) with a fresh cluster in a temporary
 * directory, on a free port of its own at a given address, its socket in that directory too. As root
 * it runs as the {@code postgres} OS user (the server refuses root), else as the current user; the
 * superuser is {@code postgres} either way, with trust or password (SCRAM) authentication over TCP.
 * Tuned for tests (no fsync). {@link #close} stops it and deletes the directory.
 */
public final class PostgresServer implements AutoCloseable {

    public static final String USER = "postgres";
    private static final Path DEFAULT_BIN = Path.of("/usr/lib/postgresql/15/bin");

    private final Path dir;
    private final String address;
    private final int port;
    private final String password;
    private boolean running;

    private PostgresServer(Path dir, String address, int port, String password) {
        this.dir = dir;
        this.address = address;
        this.port = port;
        this.password = password;
    }

    /** A server on 127.0.0.1 that trusts every TCP connection. */
    public static PostgresServer start() throws IOException {
        return start("127.0.0.1", null);
    }

    /**
     * A server listening on {@code address} (an IP address of this host, e.g. a bridge's); with a
     * {@code password} (else null: trust) TCP connections must give it.
     */
    public static PostgresServer start(String address, String password) throws IOException {
        Path bin = bin();
        if (!Files.isExecutable(bin.resolve("initdb"))) {
            throw new IllegalStateException(bin + "/initdb is missing: apt-get install postgresql-15");
        }
        Path dir = Files.createTempDirectory("rlm-pg-");
        PostgresServer server = new PostgresServer(dir, address, freePort(address), password);
        try {
            server.init(bin);
            server.start(bin);
            return server;
        } catch (IOException | RuntimeException e) {
            server.close();
            throw e;
        }
    }

    private void init(Path bin) throws IOException {
        List<String> args = new ArrayList<>(
                List.of("initdb", "-D", data(), "-U", USER, "-E", "UTF8", "--no-locale", "--auth-local=trust"));
        if (password == null) {
            args.add("--auth-host=trust");
        } else {
            Path pw = dir.resolve("pwfile");
            Files.writeString(pw, password + "\n", StandardCharsets.UTF_8);
            args.addAll(List.of("--auth-host=scram-sha-256", "--pwfile=" + pw));
        }
        if (asRoot()) {
            exec(List.of("chown", "-R", USER + ":", dir.toString()), dir.resolve("chown.log"));
        }
        run(bin, args.toArray(String[]::new));
        Files.deleteIfExists(dir.resolve("pwfile"));
        // initdb lets TCP in from loopback only; a server on a bridge's address takes its subnet's clients too
        Files.writeString(
                dir.resolve("data/pg_hba.conf"),
                "host all all samenet " + (password == null ? "trust" : "scram-sha-256") + "\n",
                StandardOpenOption.APPEND);
    }

    private String options() {
        return String.join(
                " ",
                "-p",
                String.valueOf(port),
                "-c",
                "listen_addresses=" + address,
                "-c",
                "unix_socket_directories=" + dir,
                "-c",
                "max_connections=300",
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off");
    }

    /** {@code jdbc:postgresql://address:port/postgres?user=postgres[&password=...]}. */
    public String jdbcUrl() {
        return jdbcUrl("postgres");
    }

    /** The JDBC URL of another database of this server (see {@link #createDatabase}). */
    public String jdbcUrl(String database) {
        return "jdbc:postgresql://" + address + ":" + port + "/" + database + "?user=" + USER
                + (password == null ? "" : "&password=" + encode(password));
    }

    /** {@code postgresql://postgres[:password]@address:port/postgres}, the form rlm-mcp's --cluster-db takes. */
    public String url() {
        return url("postgres");
    }

    public String url(String database) {
        String credentials = password == null ? USER : USER + ":" + encode(password);
        return "postgresql://" + credentials + "@" + address + ":" + port + "/" + database;
    }

    /** Creates an empty database (one per test keeps tests apart) and returns its JDBC URL. */
    public String createDatabase(String name) {
        if (!name.matches("[a-z_][a-z0-9_]*")) {
            throw new IllegalArgumentException("not a plain database name: " + name);
        }
        try (Connection c = DriverManager.getConnection(jdbcUrl());
                Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create database " + name + ": " + e.getMessage(), e);
        }
        return jdbcUrl(name);
    }

    public String address() {
        return address;
    }

    public int port() {
        return port;
    }

    public String password() {
        return password;
    }

    /** The server's log file. */
    public Path log() {
        return dir.resolve("log");
    }

    private String data() {
        return dir.resolve("data").toString();
    }

    private void run(Path bin, String... args) throws IOException {
        List<String> command = new ArrayList<>();
        if (asRoot()) {
            command.addAll(List.of("runuser", "-u", USER, "--"));
        }
        command.add(bin.resolve(args[0]).toString());
        command.addAll(List.of(args).subList(1, args.length));
        exec(command, dir.resolve(args[0] + ".out"));
    }

    private static void exec(List<String> command, Path output) throws IOException {
        Process p = new ProcessBuilder(command)
                .directory(output.getParent().toFile()) // one the postgres user may enter
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start();
        try {
            if (!p.waitFor(90, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(command.get(0) + " did not finish in 90 s: " + Files.readString(output));
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        if (p.exitValue() != 0) {
            throw new IOException(
                    String.join(" ", command) + " failed (" + p.exitValue() + "): " + Files.readString(output));
        }
    }

    /** Percent-encoding for a URL's user info or query ({@link URLEncoder} alone writes a space as '+'). */
    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static boolean asRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    private static Path bin() {
        String configured = System.getProperty("postgres.bin");
        return configured == null ? DEFAULT_BIN : Path.of(configured);
    }

    private static int freePort(String address) throws IOException {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(InetAddress.getByName(address), 0), 1);
            return socket.getLocalPort();
        }
    }

    /** Stops the server as an operator's restart does (fast: every session is ended), keeping its data. */
    public synchronized void stop() throws IOException {
        run(bin(), "pg_ctl", "-D", data(), "-m", "fast", "-w", "stop");
        running = false;
    }

    /** Starts the server again after {@link #stop}, on the same address and data. */
    public synchronized void startAgain() throws IOException {
        start(bin());
    }

    private synchronized void start(Path bin) throws IOException {
        run(
                bin,
                "pg_ctl",
                "-D",
                data(),
                "-l",
                dir.resolve("log").toString(),
                "-w",
                "-t",
                "60",
                "-o",
                options(),
                "start");
        running = true;
    }

    @Override
    public void close() {
        try {
            if (running) {
                running = false;
                run(bin(), "pg_ctl", "-D", data(), "-m", "immediate", "-w", "stop");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot stop PostgreSQL in " + dir, e);
        } finally {
            delete(dir);
        }
    }

    private static void delete(Path dir) {
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a leftover temporary directory is harmless
        }
    }
}

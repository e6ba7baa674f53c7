package dev.rlmmcp.e2e.support;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** The real server jar, run as a process the way a user runs it. */
public final class ServerProcess implements AutoCloseable {

    private static final Pattern LISTENING = Pattern.compile("listening on (http://\\S+)/mcp");

    private final Process process;
    private final String baseUrl;
    private final StringBuffer log = new StringBuffer();

    private ServerProcess(List<String> args, Map<String, String> env) throws IOException {
        this(args, env, null);
    }

    private ServerProcess(List<String> args, Map<String, String> env, Path cwd) throws IOException {
        this(List.of(), args, env, cwd);
    }

    private ServerProcess(List<String> runAs, List<String> args, Map<String, String> env, Path cwd) throws IOException {
        this(runAs, jarLaunch(), args, env, cwd);
    }

    private ServerProcess(List<String> runAs, List<String> launch, List<String> args, Map<String, String> env, Path cwd)
            throws IOException {
        boolean defaultStateDir = env.containsKey("XDG_DATA_HOME") || env.containsKey("RLM_STATE_DIR");
        List<String> full = new ArrayList<>(runAs);
        full.addAll(command(launch, args, !defaultStateDir));
        ProcessBuilder builder = new ProcessBuilder(full).redirectErrorStream(true);
        builder.environment().remove("RLM_API_KEY");
        builder.environment().putAll(env);
        if (cwd != null) {
            builder.directory(cwd.toFile());
        }
        process = builder.start();
        CompletableFuture<String> url = followLog(process, log);
        try {
            baseUrl = url.get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            process.destroyForcibly();
            throw new IllegalStateException("server did not start: " + e.getMessage() + "\n" + log, e);
        }
    }

    /**
     * Copies the server's output into {@code log} as it comes; completes with the base URL once the
     * server says where it listens, exceptionally if it exits first.
     */
    static CompletableFuture<String> followLog(Process process, StringBuffer log) {
        CompletableFuture<String> url = new CompletableFuture<>();
        Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader reader =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    log.append(line).append('\n');
                    Matcher m = LISTENING.matcher(line);
                    if (m.find()) {
                        url.complete(m.group(1));
                    }
                }
            } catch (IOException e) {
                url.completeExceptionally(e);
            }
            url.completeExceptionally(new IllegalStateException("server exited:\n" + log));
        });
        return url;
    }

    /** {@code rlm-mcp serve --port 0} plus extra arguments, without RLM_API_KEY (authentication off). */
    public static ServerProcess http(String... extra) throws IOException {
        return http(Map.of(), extra);
    }

    /** {@code rlm-mcp serve --port 0} plus extra arguments, with these environment variables (e.g. RLM_API_KEY). */
    public static ServerProcess http(Map<String, String> env, String... extra) throws IOException {
        List<String> args = new ArrayList<>(List.of("serve", "--port", "0"));
        args.addAll(List.of(extra));
        return new ServerProcess(args, env);
    }

    /**
     * {@code serve --port 0} plus extra arguments, run by {@link ConformanceServer} from the jar and the test
     * classes: the production server with the conformance suite's fixture tools, prompts and resources added.
     */
    public static ServerProcess httpWithFixtures(String... extra) throws IOException {
        List<String> args = new ArrayList<>(List.of("serve", "--port", "0"));
        args.addAll(List.of(extra));
        String classPath = jar() + File.pathSeparator + testClasses();
        return new ServerProcess(
                List.of(), List.of("-cp", classPath, ConformanceServer.class.getName()), args, Map.of(), null);
    }

    /** Where this test code was loaded from (target/test-classes). */
    private static Path testClasses() {
        try {
            return Path.of(ConformanceServer.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * An HTTP server started through {@code runAs} (e.g. setpriv to another user), in {@code cwd}; give it
     * a --state-dir that user may write.
     */
    public static ServerProcess http(List<String> runAs, Map<String, String> env, Path cwd, String... extra)
            throws IOException {
        List<String> args = new ArrayList<>(List.of("serve", "--port", "0"));
        args.addAll(List.of(extra));
        return new ServerProcess(runAs, args, env, cwd);
    }

    /** Asks the server to stop (SIGTERM, as a service manager does) and returns its exit code. */
    public int terminate() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("server did not stop within 30 s:\n" + log);
        }
        return process.exitValue();
    }

    /**
     * An HTTP server with extra environment variables, started in {@code cwd}; with XDG_DATA_HOME or
     * RLM_STATE_DIR in {@code env} and no --state-dir, it finds its state directory as a user's would.
     */
    public static ServerProcess http(Map<String, String> env, Path cwd, String... extra) throws IOException {
        List<String> args = new ArrayList<>(List.of("serve", "--port", "0"));
        args.addAll(List.of(extra));
        return new ServerProcess(args, env, cwd);
    }

    /**
     * The command line that runs the jar with these arguments (used for stdio too); a server given no
     * --state-dir gets a fresh temporary one, never the user's.
     */
    public static List<String> command(List<String> args) {
        return command(args, true);
    }

    /**
     * The command line; without {@code temporaryState} the server picks its state directory itself
     * (tests that do so set XDG_DATA_HOME or RLM_STATE_DIR to a directory of their own).
     */
    public static List<String> command(List<String> args, boolean temporaryState) {
        return command(jarLaunch(), args, temporaryState);
    }

    private static List<String> jarLaunch() {
        return List.of("-jar", jar().toString());
    }

    /** {@code java}, then {@code launch} (what to run: -jar JAR, or -cp PATH CLASS), then the arguments. */
    private static List<String> command(List<String> launch, List<String> args, boolean temporaryState) {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.addAll(launch);
        command.addAll(args);
        boolean server =
                !args.isEmpty() && (args.get(0).equals("serve") || args.get(0).equals("stdio"));
        if (temporaryState && server && !args.contains("--state-dir") && !args.contains("--ephemeral")) {
            command.addAll(List.of("--state-dir", temporaryStateDir().toString()));
        }
        return command;
    }

    private static Path temporaryStateDir() {
        try {
            Path dir = Files.createTempDirectory("rlm-it-state-");
            Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteTree(dir)));
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static void deleteTree(Path dir) {
        try (Stream<Path> tree = Files.walk(dir)) {
            tree.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // best effort: a temporary directory
        }
    }

    /** SIGKILL, as the OOM killer or a crash would: no shutdown hook runs. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    public static Path jar() {
        return Path.of(System.getProperty("rlm.jar", "target/rlm-mcp.jar")).toAbsolutePath();
    }

    public String baseUrl() {
        return baseUrl;
    }

    public String mcpUrl() {
        return baseUrl + "/mcp";
    }

    public String log() {
        return log.toString();
    }

    /** The last {@code lines} lines of the log, for a test that failed. */
    public String logTail(int lines) {
        List<String> all = log().lines().toList();
        return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    }

    public long pid() {
        return process.pid();
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(15, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}

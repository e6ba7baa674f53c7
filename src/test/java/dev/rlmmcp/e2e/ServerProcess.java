package dev.rlmmcp.e2e;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The real server jar, run as a process the way a user runs it. */
public final class ServerProcess implements AutoCloseable {

    private static final Pattern LISTENING = Pattern.compile("listening on (http://\\S+)/mcp");

    private final Process process;
    private final String baseUrl;
    private final StringBuffer log = new StringBuffer();

    private ServerProcess(List<String> args) throws IOException {
        this(args, java.util.Map.of());
    }

    private ServerProcess(List<String> args, java.util.Map<String, String> env) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command(args)).redirectErrorStream(true);
        builder.environment().putAll(env);
        process = builder.start();
        CompletableFuture<String> url = new CompletableFuture<>();
        Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader reader = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
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
        try {
            baseUrl = url.get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            process.destroyForcibly();
            throw new IllegalStateException("server did not start: " + e.getMessage() + "\n" + log, e);
        }
    }

    /** {@code rlm-mcp serve --port 0} plus extra arguments. */
    public static ServerProcess http(String... extra) throws IOException {
        List<String> args = new ArrayList<>(List.of("serve", "--port", "0"));
        args.addAll(List.of(extra));
        return new ServerProcess(args);
    }

    /** {@code rlm-mcp serve --port 0} plus extra arguments, with these variables added to its environment. */
    public static ServerProcess http(java.util.Map<String, String> env, String... extra) throws IOException {
        List<String> args = new ArrayList<>(List.of("serve", "--port", "0"));
        args.addAll(List.of(extra));
        return new ServerProcess(args, env);
    }

    /** The command line that runs the jar with these arguments (used for stdio too). */
    public static List<String> command(List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.add("-jar");
        command.add(jar().toString());
        command.addAll(args);
        return command;
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

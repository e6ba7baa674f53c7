package dev.rlmmcp.e2e.support;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The real Claude Code CLI pinned in {@code e2e/package-lock.json} ({@code e2e/node_modules/.bin/claude}), run
 * as a user runs it from a project directory, with its own HOME (its {@code ~/.claude.json} and
 * {@code ~/.claude/} live there) and its model requests sent to a loopback {@link AnthropicEndpoint}. Nothing
 * else is reachable, so every optional network use is switched off.
 */
public final class ClaudeCode {

    public record Result(int exit, String stdout, String stderr, long millis) {
        /** The JSON object {@code --output-format json} prints. */
        public JsonNode json() {
            try {
                return AnthropicEndpoint.JSON.readTree(stdout);
            } catch (IOException e) {
                throw new AssertionError("claude printed no JSON result:\n" + this, e);
            }
        }

        @Override
        public String toString() {
            return "exit " + exit + " after " + millis + " ms\n--- stdout ---\n" + stdout + "\n--- stderr ---\n"
                    + stderr;
        }
    }

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(60);

    private final Path home;
    private final Path project;
    private final String modelUrl;

    public ClaudeCode(Path home, Path project, String modelUrl) {
        this.home = home;
        this.project = project;
        this.modelUrl = modelUrl;
    }

    static Path binary() {
        Path root = McpDriver.projectRoot();
        McpDriver.ensureDeps(root);
        return root.resolve("e2e/node_modules/.bin/claude");
    }

    /** {@code claude mcp add ARGS} (a local-scope server of the project directory, in ~/.claude.json). */
    public Result mcpAdd(String... args) {
        List<String> all = new ArrayList<>(List.of("mcp", "add"));
        all.addAll(List.of(args));
        return run(all, COMMAND_TIMEOUT);
    }

    /** {@code claude ARGS}, waited for up to {@code timeout}; the whole process tree is killed after it. */
    public Result run(List<String> args, Duration timeout) {
        List<String> command = new ArrayList<>(List.of(binary().toString()));
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command)
                .directory(project.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        Map<String, String> env = builder.environment();
        // the test may itself run under Claude Code or with a real key: none of that may leak in
        env.keySet().removeIf(k -> k.startsWith("CLAUDE") || k.startsWith("ANTHROPIC") || k.startsWith("OTEL_"));
        // nor may an API for llm_query reach a stdio server Claude Code starts with its own environment
        env.keySet().removeIf(k -> k.startsWith("RLM_LLM_"));
        env.put("HOME", home.toString());
        env.put("XDG_CONFIG_HOME", home.resolve(".config").toString());
        env.put("XDG_DATA_HOME", home.resolve(".local/share").toString());
        env.put("ANTHROPIC_BASE_URL", modelUrl);
        env.put("ANTHROPIC_API_KEY", "sk-ant-api03-e2e-scripted-endpoint");
        env.put("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
        env.put("DISABLE_AUTOUPDATER", "1");
        env.put("DISABLE_TELEMETRY", "1");
        env.put("DISABLE_ERROR_REPORTING", "1");
        // an answer the endpoint could not give is a test failure to report now, not after minutes of retries
        env.put("CLAUDE_CODE_MAX_RETRIES", "1");
        long start = System.nanoTime();
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + command.getFirst(), e);
        }
        CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(process.getInputStream()));
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(process.getErrorStream()));
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                List<ProcessHandle> tree = process.descendants().toList();
                process.destroyForcibly();
                tree.forEach(ProcessHandle::destroyForcibly);
                process.waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError("claude " + String.join(" ", args) + " did not finish within " + timeout + "\n"
                        + new Result(-1, out.getNow(""), err.getNow(""), millisSince(start)));
            }
            return new Result(
                    process.exitValue(),
                    out.get(10, TimeUnit.SECONDS),
                    err.get(10, TimeUnit.SECONDS),
                    millisSince(start));
        } catch (InterruptedException e) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("cannot read claude's output", e);
        }
    }

    /** The processes whose command line mentions {@code path} (a server and the sandboxes of its kernels). */
    public static List<ProcessHandle> processesMentioning(Path path) {
        String needle = path.toString();
        long self = ProcessHandle.current().pid();
        return ProcessHandle.allProcesses()
                .filter(p -> p.pid() != self && p.isAlive())
                .filter(p -> UserServer.argv(p.pid()).stream().anyMatch(a -> a.contains(needle)))
                .toList();
    }

    /** Lines of a debug log that contain any of the words (the tail of what Claude Code said about a thing). */
    public static String grep(Path log, String... words) {
        try {
            if (!Files.exists(log)) {
                return "(no " + log + ")";
            }
            StringBuilder out = new StringBuilder();
            for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
                for (String w : words) {
                    if (line.contains(w)) {
                        out.append(line.length() > 400 ? line.substring(0, 400) + "…" : line)
                                .append('\n');
                        break;
                    }
                }
            }
            return out.toString();
        } catch (IOException e) {
            return "(unreadable " + log + ": " + e + ")";
        }
    }

    private static long millisSince(long start) {
        return (System.nanoTime() - start) / 1_000_000;
    }

    private static String read(InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}

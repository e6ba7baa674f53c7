package dev.rlmmcp.e2e.support;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs {@code e2e/mcp-driver.mjs} (official MCP TypeScript SDK client) and talks to it over its line protocol.
 * Thread-safe: result lines are routed by id, so several threads may have requests in flight.
 */
public final class McpDriver implements AutoCloseable {

    public static final ObjectMapper MAPPER = new ObjectMapper();
    private static final long READY_TIMEOUT_MS = 60_000;
    private static final long DEFAULT_CALL_TIMEOUT_MS = 120_000;
    private static final long MAX_STDERR_CHARS = 1 << 20;
    private static final Object DEPS_LOCK = new Object();
    private static boolean depsReady;

    private final Process process;
    private final Writer stdin;
    private final StringBuilder stderr = new StringBuilder();
    private final Map<Long, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
    private final List<JsonNode> events = new CopyOnWriteArrayList<>();
    private final CompletableFuture<JsonNode> ready = new CompletableFuture<>();
    private final AtomicLong ids = new AtomicLong();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final JsonNode readyLine;

    public static McpDriver stdio(List<String> serverCommand) {
        return stdio(serverCommand, null);
    }

    public static McpDriver stdio(List<String> serverCommand, String samplingReply) {
        List<String> args = new ArrayList<>(List.of("--stdio"));
        addSampling(args, samplingReply);
        args.add("--");
        args.addAll(serverCommand);
        return start(args);
    }

    public static McpDriver http(String url) {
        return http(url, Map.of(), null);
    }

    public static McpDriver http(String url, Map<String, String> headers, String samplingReply) {
        return start(httpArgs("--http", url, headers, samplingReply));
    }

    public static McpDriver sse(String url) {
        return sse(url, Map.of(), null);
    }

    public static McpDriver sse(String url, Map<String, String> headers, String samplingReply) {
        return start(httpArgs("--sse", url, headers, samplingReply));
    }

    /** Starts the driver with raw command-line arguments, e.g. {@code ["--http", url]}. */
    public static McpDriver start(List<String> driverArgs) {
        Path root = projectRoot();
        ensureDeps(root);
        List<String> cmd = new ArrayList<>(List.of(
                findNode().toString(), root.resolve("e2e/mcp-driver.mjs").toString()));
        cmd.addAll(driverArgs);
        try {
            return new McpDriver(
                    new ProcessBuilder(cmd).directory(root.toFile()).start());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + cmd, e);
        }
    }

    private McpDriver(Process process) {
        this.process = process;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        daemon("mcp-driver-stderr", () -> pumpStderr(process.getErrorStream()));
        daemon("mcp-driver-stdout", () -> readStdout(process.getInputStream()));
        try {
            readyLine = ready.get(READY_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            close();
            throw new IllegalStateException(
                    "MCP driver did not become ready: " + rootMessage(e) + "\n--- driver stderr ---\n" + stderr(), e);
        }
    }

    /** The {@code {"event":"ready",...}} line (serverInfo, capabilities, protocolVersion, instructions, sessionId). */
    public JsonNode readyLine() {
        return readyLine;
    }

    /**
     * Calls a tool and returns its CallToolResult; fails if the SDK reported an error. The rlm_* tools
     * are asked for JSON replies (the text is the reply object) unless the call names a response_format:
     * tests read their facts; {@link #callAsIs} sees the default text a model reads.
     */
    public JsonNode call(String tool, Map<String, ?> args) {
        JsonNode line = callRaw(tool, args, false);
        if (!line.path("ok").asBoolean()) {
            throw new AssertionError("tools/call " + tool + " failed: " + line.path("error"));
        }
        return line.path("result");
    }

    /** Calls a tool with its arguments as given (default reply format) and returns its CallToolResult. */
    public JsonNode callAsIs(String tool, Map<String, ?> args) {
        ObjectNode cmd =
                MAPPER.createObjectNode().put("op", "call").put("tool", tool).put("progress", false);
        cmd.set("args", MAPPER.valueToTree(args));
        JsonNode line = request(cmd);
        if (!line.path("ok").asBoolean()) {
            throw new AssertionError("tools/call " + tool + " failed: " + line.path("error"));
        }
        return line.path("result");
    }

    /** Calls a tool and returns the whole result line ({@code id}, {@code ok}, {@code result} or {@code error}). */
    public JsonNode callRaw(String tool, Map<String, ?> args, boolean progress) {
        return request(callCommand(tool, args, progress));
    }

    public CompletableFuture<JsonNode> callAsync(String tool, Map<String, ?> args, boolean progress) {
        return requestAsync(callCommand(tool, args, progress));
    }

    public static ObjectNode callCommand(String tool, Map<String, ?> args, boolean progress) {
        ObjectNode cmd =
                MAPPER.createObjectNode().put("op", "call").put("tool", tool).put("progress", progress);
        ObjectNode arguments = args == null ? MAPPER.createObjectNode() : MAPPER.valueToTree(args);
        if (tool.startsWith("rlm_") && !arguments.has("response_format")) {
            arguments.put("response_format", "json");
        }
        cmd.set("args", arguments);
        return cmd;
    }

    /** Sends any command (an {@code id} is assigned when absent) and waits for its result line. */
    public JsonNode request(ObjectNode command) {
        CompletableFuture<JsonNode> f = requestAsync(command);
        long timeoutMs = command.path("op").asText().equals("bench")
                ? TimeUnit.MINUTES.toMillis(30)
                : command.path("timeoutMs").asLong(DEFAULT_CALL_TIMEOUT_MS) + 30_000;
        try {
            return f.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for " + command, e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException(
                    "no result for " + command + ": " + rootMessage(e) + "\n--- driver stderr ---\n" + stderr(), e);
        }
    }

    public CompletableFuture<JsonNode> requestAsync(ObjectNode command) {
        ObjectNode cmd = command.deepCopy();
        if (!cmd.hasNonNull("id")) {
            cmd.put("id", ids.incrementAndGet() + 1_000_000_000L);
        }
        long id = cmd.get("id").asLong();
        CompletableFuture<JsonNode> f = new CompletableFuture<>();
        if (pending.putIfAbsent(id, f) != null) {
            throw new IllegalArgumentException("request id already in flight: " + id);
        }
        try {
            synchronized (stdin) {
                stdin.write(MAPPER.writeValueAsString(cmd));
                stdin.write('\n');
                stdin.flush();
            }
        } catch (IOException e) {
            pending.remove(id);
            f.completeExceptionally(new IllegalStateException("cannot write to MCP driver (exited?)", e));
        }
        return f;
    }

    /** Progress, sampling, notification and closed events received so far. */
    public List<JsonNode> events() {
        return List.copyOf(events);
    }

    /** Everything the driver (and, for stdio, the server) wrote to stderr so far. */
    public String stderr() {
        synchronized (stderr) {
            return stderr.toString();
        }
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            boolean graceful = false;
            if (process.isAlive() && ready.isDone() && !ready.isCompletedExceptionally()) {
                try {
                    requestAsync(MAPPER.createObjectNode().put("op", "close")).get(20, TimeUnit.SECONDS);
                    graceful = process.waitFor(10, TimeUnit.SECONDS);
                } catch (ExecutionException | TimeoutException ignored) {
                    // terminate below
                }
            }
            if (!graceful && process.isAlive()) {
                List<ProcessHandle> children = process.descendants().toList();
                process.destroy();
                if (!process.waitFor(5, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
                children.forEach(ProcessHandle::destroyForcibly);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }

    /** The text of the first text content item of a CallToolResult. */
    public static String text(JsonNode result) {
        for (JsonNode c : result.path("content")) {
            if ("text".equals(c.path("type").asText())) {
                return c.path("text").asText();
            }
        }
        throw new AssertionError("no text content in " + result);
    }

    /** The first text content item of a CallToolResult, parsed as JSON. */
    public static JsonNode json(JsonNode result) {
        String text = text(result);
        try {
            return MAPPER.readTree(text);
        } catch (JsonProcessingException e) {
            throw new AssertionError("text content is not JSON: " + text, e);
        }
    }

    private void readStdout(InputStream in) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                route(line);
            }
        } catch (IOException ignored) {
            // process gone
        } finally {
            String why = "MCP driver exited" + exitCode();
            IllegalStateException gone = new IllegalStateException(why);
            ready.completeExceptionally(gone);
            pending.values().forEach(f -> f.completeExceptionally(gone));
            pending.clear();
        }
    }

    private void route(String line) {
        JsonNode node;
        try {
            node = MAPPER.readTree(line);
        } catch (JsonProcessingException e) {
            appendStderr("[non-JSON stdout] " + line);
            return;
        }
        String event = node.path("event").asText(null);
        if ("ready".equals(event)) {
            ready.complete(node);
        } else if ("fatal".equals(event)) {
            IllegalStateException fatal = new IllegalStateException(
                    "MCP driver fatal: " + node.path("message").asText());
            ready.completeExceptionally(fatal);
            pending.values().forEach(f -> f.completeExceptionally(fatal));
            events.add(node);
        } else if (event != null) {
            events.add(node);
        } else {
            CompletableFuture<JsonNode> f = node.path("id").canConvertToLong()
                    ? pending.remove(node.get("id").asLong())
                    : null;
            if (f != null) {
                f.complete(node);
            } else {
                appendStderr("[unrouted result] " + line);
            }
        }
    }

    private void pumpStderr(InputStream in) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                System.err.println("[mcp-driver] " + line);
                appendStderr(line);
            }
        } catch (IOException ignored) {
            // process gone
        }
    }

    private void appendStderr(String line) {
        synchronized (stderr) {
            stderr.append(line).append('\n');
            if (stderr.length() > MAX_STDERR_CHARS) {
                stderr.delete(0, stderr.length() - (int) MAX_STDERR_CHARS / 2);
            }
        }
    }

    private String exitCode() {
        try {
            return process.waitFor(2, TimeUnit.SECONDS) ? " with code " + process.exitValue() : "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    private static List<String> httpArgs(String flag, String url, Map<String, String> headers, String samplingReply) {
        List<String> args = new ArrayList<>(List.of(flag, url));
        headers.forEach((k, v) -> args.addAll(List.of("--header", k + ": " + v)));
        addSampling(args, samplingReply);
        return args;
    }

    private static void addSampling(List<String> args, String samplingReply) {
        if (samplingReply != null) {
            args.addAll(List.of("--sampling-reply", samplingReply));
        }
    }

    private static void daemon(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while ((t instanceof ExecutionException || t.getMessage() == null) && t.getCause() != null) {
            t = t.getCause();
        }
        return t.toString();
    }

    public static Path projectRoot() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("pom.xml"))) {
                return p;
            }
        }
        throw new IllegalStateException("no pom.xml above " + Path.of("").toAbsolutePath());
    }

    public static Path findNode() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, "node");
            if (Files.isExecutable(p) && !Files.isDirectory(p)) {
                return p;
            }
        }
        throw new IllegalStateException("node (Node.js >= 20) not found on PATH; see scripts/e2e-deps.sh");
    }

    public static void ensureDeps(Path root) {
        synchronized (DEPS_LOCK) {
            if (depsReady) {
                return;
            }
            try {
                Process p = new ProcessBuilder(
                                "bash", root.resolve("scripts/e2e-deps.sh").toString())
                        .directory(root.toFile())
                        .redirectErrorStream(true)
                        .start();
                p.getOutputStream().close();
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (!p.waitFor(10, TimeUnit.MINUTES) || p.exitValue() != 0) {
                    p.destroyForcibly();
                    throw new IllegalStateException("scripts/e2e-deps.sh failed:\n" + out);
                }
                if (!out.isBlank()) {
                    System.err.print(out);
                }
                depsReady = true;
            } catch (IOException e) {
                throw new UncheckedIOException("cannot run scripts/e2e-deps.sh", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted running scripts/e2e-deps.sh", e);
            }
        }
    }
}

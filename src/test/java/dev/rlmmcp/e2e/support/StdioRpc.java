package dev.rlmmcp.e2e.support;

import static dev.rlmmcp.e2e.support.McpDriver.MAPPER;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A minimal stdio MCP client that writes JSON-RPC lines itself, for what the official client cannot be
 * made to do exactly: close stdin and then only wait (the SDK's client sends SIGTERM 2 s after closing
 * stdin, and SIGKILL 2 s later). One request at a time.
 */
public final class StdioRpc implements AutoCloseable {

    private final Process process;
    private final OutputStream stdin;
    private final BlockingQueue<JsonNode> replies = new LinkedBlockingQueue<>();
    private final StringBuffer stderr = new StringBuffer();
    private long ids;
    /** For a client of protocol 2026-07-28: the _meta every request carries (no initialize); else null. */
    private final Map<String, Object> meta;

    public StdioRpc(List<String> command) throws IOException {
        this(command, null);
    }

    /** A client of protocol 2026-07-28 with these capabilities: no initialize, its version and capabilities in every request. */
    public static StdioRpc stateless(List<String> command, Map<String, ?> capabilities) throws IOException {
        return new StdioRpc(
                command,
                Map.of(
                        "io.modelcontextprotocol/protocolVersion",
                        "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities",
                        capabilities));
    }

    private StdioRpc(List<String> command, Map<String, Object> meta) throws IOException {
        this.meta = meta;
        process = new ProcessBuilder(command).start();
        stdin = process.getOutputStream();
        Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (!line.isBlank()) {
                        replies.add(MAPPER.readTree(line));
                    }
                }
            } catch (IOException ignored) {
                // gone
            }
        });
        Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    stderr.append(line).append('\n');
                }
            } catch (IOException ignored) {
                // gone
            }
        });
        if (meta == null) {
            request(
                    "initialize",
                    Map.of(
                            "protocolVersion",
                            "2025-06-18",
                            "capabilities",
                            Map.of(),
                            "clientInfo",
                            Map.of("name", "journey-raw-stdio", "version", "1")));
            send(MAPPER.createObjectNode().put("jsonrpc", "2.0").put("method", "notifications/initialized"));
        }
    }

    /**
     * Sends a tool call and returns at once, for a call left running while others are made; its
     * answer, when it comes, is passed over by later requests.
     */
    public void callWithoutWaiting(String tool, Map<String, ?> args) throws IOException {
        Map<String, Object> json = new java.util.HashMap<>(args);
        json.putIfAbsent("response_format", "json");
        send(message(++ids, "tools/call", Map.of("name", tool, "arguments", json)));
    }

    /** The id of the last request sent. */
    public long lastId() {
        return ids;
    }

    /** Sends a notification, such as notifications/cancelled. */
    public void notify(String method, Map<String, ?> params) throws IOException {
        ObjectNode msg = MAPPER.createObjectNode().put("jsonrpc", "2.0").put("method", method);
        msg.set("params", MAPPER.valueToTree(params));
        send(msg);
    }

    /** Sends a request and waits for its answer's {@code result}; a JSON-RPC error fails the test. */
    public JsonNode request(String method, Map<String, ?> params) throws IOException {
        long id = ++ids;
        send(message(id, method, params));
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        while (System.nanoTime() < deadline) {
            JsonNode reply;
            try {
                reply = replies.poll(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            if (reply == null) {
                if (!process.isAlive()) {
                    throw new AssertionError("stdio server exited before answering " + method + ":\n" + stderr);
                }
                continue;
            }
            if (reply.path("id").asLong(-1) == id) {
                if (reply.has("error")) {
                    throw new AssertionError(method + " failed: " + reply.get("error"));
                }
                return reply.path("result");
            }
        }
        throw new AssertionError("no answer to " + method + " within 5 minutes:\n" + stderr);
    }

    /** The tool's JSON reply (asked for as response_format json); the call must not be flagged isError. */
    public JsonNode call(String tool, Map<String, ?> args) throws IOException {
        Map<String, Object> json = new java.util.HashMap<>(args);
        json.putIfAbsent("response_format", "json");
        JsonNode result = request("tools/call", Map.of("name", tool, "arguments", json));
        if (result.path("isError").asBoolean()) {
            throw new AssertionError(tool + " " + args + " -> " + result);
        }
        return McpDriver.json(result);
    }

    private ObjectNode message(long id, String method, Map<String, ?> params) {
        ObjectNode msg =
                MAPPER.createObjectNode().put("jsonrpc", "2.0").put("id", id).put("method", method);
        msg.set("params", MAPPER.valueToTree(params));
        if (meta != null) {
            ((ObjectNode) msg.get("params")).set("_meta", MAPPER.valueToTree(meta));
        }
        return msg;
    }

    private void send(JsonNode msg) throws IOException {
        stdin.write((MAPPER.writeValueAsString(msg) + "\n").getBytes(StandardCharsets.UTF_8));
        stdin.flush();
    }

    /** Closes stdin (end of file, as when the client goes away) and waits for the server to leave by itself. */
    public int closeStdinAndWait(long seconds) throws IOException, InterruptedException {
        long start = System.nanoTime();
        stdin.close();
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            throw new AssertionError("stdio server still running " + seconds + " s after stdin closed:\n" + stderr);
        }
        System.err.printf(
                "[journey] stdio server exited with %d, %d ms after stdin EOF%n",
                process.exitValue(), (System.nanoTime() - start) / 1_000_000);
        return process.exitValue();
    }

    public long pid() {
        return process.pid();
    }

    String stderr() {
        return stderr.toString();
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            List<ProcessHandle> children = process.descendants().toList();
            process.destroyForcibly();
            children.forEach(ProcessHandle::destroyForcibly);
        }
    }
}

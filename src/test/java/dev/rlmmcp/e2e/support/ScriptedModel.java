package dev.rlmmcp.e2e.support;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code bench/scripted_model.py}, the scripted OpenAI-compatible model endpoint (policies chosen by the
 * model name "scripted-<policy>" or the question's words), run as a process on a loopback port.
 */
public final class ScriptedModel implements AutoCloseable {

    private final Process process;
    private final URI baseUrl;

    private ScriptedModel(Process process, int port) {
        this.process = process;
        this.baseUrl = URI.create("http://127.0.0.1:" + port + "/v1");
    }

    public static ScriptedModel start() throws IOException {
        Process process = new ProcessBuilder(
                        "python3",
                        McpDriver.projectRoot()
                                .resolve("bench/scripted_model.py")
                                .toString(),
                        "--port",
                        "0")
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        process.getOutputStream().close();
        BufferedReader out =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (IOException e) {
                return null;
            }
        });
        String line;
        try {
            line = first.get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            line = null;
        }
        if (line == null || !line.startsWith("listening ")) {
            process.destroyForcibly();
            throw new IllegalStateException("bench/scripted_model.py did not say where it listens; it said: " + line);
        }
        Thread.ofPlatform().daemon().start(() -> {
            try {
                out.transferTo(java.io.Writer.nullWriter());
            } catch (IOException ignored) {
                // gone
            }
        });
        return new ScriptedModel(
                process, Integer.parseInt(line.substring("listening ".length()).trim()));
    }

    /** The base URL clients are given, ending in /v1. */
    public URI baseUrl() {
        return baseUrl;
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}

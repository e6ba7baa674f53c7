package dev.rlmmcp.e2e.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The pinned npm clients in {@code e2e/} (installed by {@code scripts/e2e-deps.sh}), run as
 * processes: the official conformance suite and the MCP Inspector CLI.
 */
public final class NodeTool {

    public record Result(int exit, String stdout, String stderr) {
        public String both() {
            return "--- stdout ---\n" + stdout + "\n--- stderr ---\n" + stderr;
        }
    }

    private NodeTool() {}

    /** {@code conformance server --url URL}: the active server suite. */
    public static Result conformance(String url, Path outputDir) {
        // conformance 0.1.16 imports fs.globSync, which Node 20 lacks; the preload stubs it there
        return run(
                List.of(
                        "--import",
                        "./node20-globsync.mjs",
                        "node_modules/@modelcontextprotocol/conformance/dist/index.js",
                        "server",
                        "--url",
                        url,
                        "-o",
                        outputDir.toString()),
                Map.of(),
                Duration.ofMinutes(5));
    }

    /**
     * {@code conformance server --url URL --requirements REVISION} of the suite's 0.2.0-alpha.12 (e2e's
     * {@code conformance-2026}): every scenario that revision requires, and for 2026-07-28 the tasks
     * extension's; the run fails on any failure.
     */
    public static Result conformanceRequirements(String url, String revision, Path outputDir) {
        return run(
                List.of(
                        "--import",
                        "./node20-globsync.mjs",
                        "node_modules/conformance-2026/dist/index.js",
                        "server",
                        "--url",
                        url,
                        "--requirements",
                        revision,
                        "-o",
                        outputDir.toString()),
                Map.of(),
                Duration.ofMinutes(8));
    }

    /** The Inspector CLI with these arguments; its catalog file goes to {@code home}. */
    public static Result inspector(Path home, List<String> args) {
        List<String> all = new ArrayList<>(
                List.of("node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js", "--cli"));
        all.addAll(args);
        return run(
                all,
                Map.of("MCP_CATALOG_PATH", home.resolve("mcp.json").toString(), "HOME", home.toString()),
                Duration.ofMinutes(2));
    }

    private static Result run(List<String> args, Map<String, String> env, Duration timeout) {
        Path root = McpDriver.projectRoot();
        McpDriver.ensureDeps(root);
        List<String> command = new ArrayList<>(List.of(McpDriver.findNode().toString()));
        command.addAll(args);
        ProcessBuilder builder =
                new ProcessBuilder(command).directory(root.resolve("e2e").toFile());
        builder.environment().putAll(env);
        try {
            Process process = builder.start();
            process.getOutputStream().close();
            CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(process.getInputStream()));
            CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(process.getErrorStream()));
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                throw new AssertionError(command + " did not finish within " + timeout);
            }
            return new Result(process.exitValue(), out.join(), err.join());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static String read(InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}

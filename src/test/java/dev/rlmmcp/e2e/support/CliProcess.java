package dev.rlmmcp.e2e.support;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * An agent CLI of {@code e2e/} run the way a script runs it: in an environment of its own (only the variables a
 * login shell passes on, the e2e Node first on PATH, HOME and TMPDIR under {@code home}), stdin closed, its
 * output read to the end, and every process it starts (the MCP servers it spawns, their kernels) seen while it
 * runs, so that what outlives it can be told and ended.
 */
public final class CliProcess {

    /** One run: its exit code, what it printed, how long it took, and every process it started. */
    public record Run(int exit, String stdout, String stderr, Duration took, Set<ProcessHandle> started) {
        @Override
        public String toString() {
            return "exit " + exit + " after " + took.toMillis() + " ms\n--- stdout ---\n" + stdout
                    + "\n--- stderr ---\n" + stderr;
        }
    }

    private CliProcess() {}

    /** The environment of a CLI whose home is {@code home}; its own variables go on top. */
    static Map<String, String> environment(Path home) {
        Map<String, String> env = new LinkedHashMap<>();
        for (String name : List.of("PATH", "LANG", "USER", "LOGNAME", "SHELL", "JAVA_HOME")) {
            if (System.getenv(name) != null) {
                env.put(name, System.getenv(name));
            }
        }
        env.put("PATH", McpDriver.findNode().getParent() + ":" + env.getOrDefault("PATH", "/usr/bin:/bin"));
        env.put("HOME", home.toString());
        env.put("TMPDIR", home.resolve("tmp").toString());
        return env;
    }

    /**
     * Runs {@code e2e/node_modules/.bin/<binary> args} in {@code workDir} with exactly {@code env}; one that
     * has not ended after {@code timeout} is killed, with what it started, and fails the test.
     */
    static Run run(String binary, List<String> args, Path workDir, Map<String, String> env, Duration timeout)
            throws IOException, InterruptedException {
        Path root = McpDriver.projectRoot();
        McpDriver.ensureDeps(root);
        List<String> command = new ArrayList<>(
                List.of(root.resolve("e2e/node_modules/.bin/" + binary).toString()));
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command).directory(workDir.toFile());
        builder.environment().clear();
        builder.environment().putAll(env);
        long start = System.nanoTime();
        Process process = builder.start();
        process.getOutputStream().close();
        CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(process.getInputStream()));
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(process.getErrorStream()));
        Set<ProcessHandle> started = ConcurrentHashMap.newKeySet();
        long deadline = start + timeout.toNanos();
        while (!process.waitFor(100, TimeUnit.MILLISECONDS)) {
            process.descendants().forEach(started::add);
            if (System.nanoTime() > deadline) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError(binary + " " + args + " did not finish within " + timeout
                        + "\n--- stdout ---\n"
                        + out.completeOnTimeout("", 5, TimeUnit.SECONDS).join()
                        + "\n--- stderr ---\n"
                        + err.completeOnTimeout("", 5, TimeUnit.SECONDS).join());
            }
        }
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        return new Run(process.exitValue(), out.join(), err.join(), took, Set.copyOf(started));
    }

    private static String read(InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}

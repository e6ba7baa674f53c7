package dev.rlmmcp.e2e.support;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code bin/rlm-mcp serve --port 0} started the way a user starts it (see {@link UserLaunch}), stopped the
 * way a service manager stops it (SIGTERM), or killed. The launcher execs the JVM (through setpriv and env
 * when run as another user), so the process's pid is the server's.
 */
public final class UserServer implements AutoCloseable {

    private final Process process;
    private final String baseUrl;
    private final StringBuffer log = new StringBuffer();

    private UserServer(UserLaunch launch, List<String> args) throws IOException {
        List<String> all = new ArrayList<>(List.of("serve", "--port", "0"));
        all.addAll(args);
        process = new ProcessBuilder(launch.command(all))
                .redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .start();
        CompletableFuture<String> url = ServerProcess.followLog(process, log);
        try {
            baseUrl = url.get(90, TimeUnit.SECONDS);
        } catch (Exception e) {
            process.destroyForcibly();
            throw new IllegalStateException(
                    "server did not start (" + String.join(" ", launch.command(all)) + "): " + e.getMessage() + "\n"
                            + log,
                    e);
        }
    }

    public static UserServer start(UserLaunch launch, String... args) throws IOException {
        return new UserServer(launch, List.of(args));
    }

    public String mcpUrl() {
        return baseUrl + "/mcp";
    }

    String baseUrl() {
        return baseUrl;
    }

    public String log() {
        return log.toString();
    }

    public long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** SIGTERM, then waits for the server to exit; returns its exit code. */
    public int terminate() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("server did not stop within 60 s of SIGTERM:\n" + log);
        }
        return process.exitValue();
    }

    /** SIGKILL: no shutdown of any kind. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** The Python kernels this server runs (the processes running the harness, not the sandbox around them). */
    List<ProcessHandle> kernels() {
        return kernelsOf(process.toHandle());
    }

    /**
     * The kernel of one session: the one whose sandbox binds the session's snapshot directory (the
     * others are warm kernels, or other sessions').
     */
    public List<ProcessHandle> kernelOf(String sessionId) {
        return kernels().stream()
                .filter(p -> {
                    try {
                        return Files.readAllLines(Path.of("/proc", Long.toString(p.pid()), "mountinfo")).stream()
                                .anyMatch(line -> line.contains("/snapshots/" + sessionId + " /run/rlm-mcp/snapshot "));
                    } catch (java.io.IOException e) {
                        return false;
                    }
                })
                .toList();
    }

    static List<ProcessHandle> kernelsOf(ProcessHandle server) {
        return server.descendants().filter(UserServer::isKernel).toList();
    }

    private static boolean isKernel(ProcessHandle p) {
        List<String> argv = argv(p.pid());
        return !argv.isEmpty()
                && Path.of(argv.get(0)).getFileName().toString().startsWith("python")
                && argv.stream().anyMatch(a -> a.matches(".*/harness(-[0-9a-f]+)?/?"));
    }

    /** A process's argv as /proc has it (empty when it is gone). */
    public static List<String> argv(long pid) {
        try {
            byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
            List<String> argv = new ArrayList<>();
            int start = 0;
            for (int i = 0; i < raw.length; i++) {
                if (raw[i] == 0) {
                    argv.add(new String(raw, start, i - start, StandardCharsets.UTF_8));
                    start = i + 1;
                }
            }
            return argv;
        } catch (IOException e) {
            return List.of();
        }
    }

    @Override
    public void close() {
        if (!process.isAlive()) {
            return;
        }
        List<ProcessHandle> children = process.descendants().toList();
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        children.forEach(ProcessHandle::destroyForcibly);
    }
}

package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import dev.rlmmcp.kernel.process.PythonLocator;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The default path with the default sandbox (bwrap): a data root several levels below a directory
 * the kernel's uid may not enter, and the user's own interpreter, a venv with a package of its own.
 * As the user running the tests, and, when that is root, once more as a non-root user (uid 65534).
 */
class SandboxDefaultPathIT {

    private static final int NOBODY = 65534;
    private static final List<String> AS_NOBODY =
            List.of("/usr/bin/setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups");
    private static final String PROBE = """
            import sys, sandbox_it_pkg
            print(sys.executable)
            print(sys.version)
            print(sandbox_it_pkg.MARK)
            print(open('app.log').read().strip())
            """;

    /** 0700, owned by the user running the tests. */
    @TempDir
    static Path dir;

    @BeforeAll
    static void bwrapIsHere() {
        assumeTrue(
                Files.isExecutable(Path.of("/usr/bin/bwrap")),
                "bubblewrap is not installed: the default sandbox is not bwrap here");
    }

    @Test
    void asTheUserRunningTheTests() throws Exception {
        Path home = directory(dir, "home/u", "rwxr-x---");
        Path venv = venv(List.of(), PythonLocator.locate("python3").executable(), home.resolve(".venvs/k"));
        journey(List.of(), home, venv);
    }

    @Test
    void asANonRootUser() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "not root: no other user to become");
        assumeTrue(Files.isExecutable(Path.of(AS_NOBODY.get(0))), "setpriv is not installed");
        Path base = Files.createTempDirectory("rlm-it-home-");
        try {
            Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
            Path home = directory(base, "u", "rwxr-x---");
            // through sh: setpriv itself may still exec a binary its uid cannot reach
            Path python = Stream.of(PythonLocator.locate("python3").executable(), Path.of("/usr/bin/python3"))
                    .filter(p -> run(AS_NOBODY, "/bin/sh", "-c", "exec \"$0\" -c pass", p.toString())
                                    .exitCode()
                            == 0)
                    .findFirst()
                    .orElse(null);
            assumeTrue(python != null, "no Python here that uid " + NOBODY + " may run");
            chown(home);
            Path venv = venv(AS_NOBODY, python, home.resolve(".venvs/k"));
            journey(AS_NOBODY, home, venv);
        } finally {
            ServerProcess.deleteTree(base);
        }
    }

    /** Loads a file from ~/projects/x/data and runs the venv's package in the kernel; /health names the venv. */
    private static void journey(List<String> runAs, Path home, Path venv) throws Exception {
        Path data = directory(home, "projects/x/data", "rwxr-xr-x");
        Path log = data.resolve("app.log");
        Files.writeString(log, "first line\n");
        Files.setPosixFilePermissions(log, PosixFilePermissions.fromString("rw-r--r--"));
        Path state = data.resolve(".rlm-state");
        if (!runAs.isEmpty()) {
            chown(home);
        }
        Path python = venv.resolve("bin/python");
        String version = run(runAs, python.toString(), "-I", "-c", "import sys; print(sys.version)")
                .out()
                .strip();
        try (ServerProcess server = ServerProcess.http(
                        runAs,
                        Map.of("HOME", home.toString(), "RLM_SANDBOX", "auto"),
                        home,
                        "--data-root",
                        data.toString(),
                        "--python",
                        python.toString(),
                        "--state-dir",
                        state.toString(),
                        "--runtime-dir",
                        home.resolve(".run").toString(),
                        "--mcp-discovery",
                        "false");
                McpDriver client = McpDriver.http(server.mcpUrl())) {
            JsonNode loaded = McpDriver.json(
                    client.call("rlm_load_file", Map.of("name", "v", "path", "app.log", "response_format", "json")));
            assertThat(loaded.path("error").isMissingNode())
                    .as(loaded.toString())
                    .isTrue();
            JsonNode absolute = McpDriver.json(client.call(
                    "rlm_load_file", Map.of("name", "w", "path", log.toString(), "response_format", "json")));
            assertThat(absolute.path("error").isMissingNode())
                    .as(absolute.toString())
                    .isTrue();

            JsonNode ran = execute(client, PROBE + "print(v.strip() == w.strip() == 'first line')");
            assertThat(ran.path("stdout").asText().split("\n"))
                    .as(ran.toString())
                    .containsExactly(python.toString(), version, "venv-package", "first line", "True");
            JsonNode hidden = execute(client, "import pathlib\nprint(sorted(pathlib.Path('" + state + "').iterdir()))");
            assertThat(hidden.path("stdout").asText()).as(hidden.toString()).isEqualTo("[]\n");

            JsonNode health = McpDriver.MAPPER.readTree(HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create(server.baseUrl() + "/health"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body());
            assertThat(health.path("sandbox").asText()).isEqualTo("bwrap");
            assertThat(health.path("python").asText()).isEqualTo(python.toString());
            assertThat(version).startsWith(health.path("python_version").asText() + " ");
            JsonNode memory = McpDriver.json(client.call("rlm_memory", Map.of("response_format", "json")));
            assertThat(memory.path("python").asText()).as(memory.toString()).isEqualTo(python.toString());
        }
    }

    private static JsonNode execute(McpDriver client, String code) {
        JsonNode reply = McpDriver.json(client.call("rlm_execute", Map.of("code", code, "response_format", "json")));
        assertThat(reply.path("error").isNull() || reply.path("error").isMissingNode())
                .as(reply.toString())
                .isTrue();
        return reply;
    }

    /** A venv made by {@code python} (pip-less) with a one-file package of its own in its site-packages. */
    private static Path venv(List<String> runAs, Path python, Path at) throws IOException {
        Files.createDirectories(at.getParent());
        if (!runAs.isEmpty()) {
            chown(at.getParent());
        }
        Result made = run(runAs, python.toString(), "-m", "venv", "--without-pip", at.toString());
        assumeTrue(made.exitCode() == 0, "cannot make a venv with " + python + ": " + made.out());
        String purelib = run(
                        runAs,
                        at.resolve("bin/python").toString(),
                        "-I",
                        "-c",
                        "import sysconfig; print(sysconfig.get_paths()['purelib'])")
                .out()
                .strip();
        Path pkg = Files.createDirectories(Path.of(purelib, "sandbox_it_pkg"));
        Files.writeString(pkg.resolve("__init__.py"), "MARK = 'venv-package'\n");
        Files.setPosixFilePermissions(pkg.resolve("__init__.py"), PosixFilePermissions.fromString("rw-r--r--"));
        Files.setPosixFilePermissions(pkg, PosixFilePermissions.fromString("rwxr-xr-x"));
        if (!runAs.isEmpty()) {
            chown(at);
        }
        return at;
    }

    /** Makes {@code relative} under {@code base}, each level 0755 but the last, which gets {@code mode}. */
    private static Path directory(Path base, String relative, String mode) throws IOException {
        Path path = base;
        for (Path name : Path.of(relative)) {
            path = Files.createDirectories(path.resolve(name.toString()));
            Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(mode));
        return path;
    }

    private static void chown(Path tree) throws IOException {
        try (Stream<Path> all = Files.walk(tree)) {
            for (Path p : all.toList()) {
                Files.setAttribute(p, "unix:uid", NOBODY, java.nio.file.LinkOption.NOFOLLOW_LINKS);
                Files.setAttribute(p, "unix:gid", NOBODY, java.nio.file.LinkOption.NOFOLLOW_LINKS);
            }
        }
    }

    private record Result(int exitCode, String out) {}

    private static Result run(List<String> runAs, String... command) {
        List<String> full = new ArrayList<>(runAs);
        full.addAll(List.of(command));
        try {
            Process process = new ProcessBuilder(full).redirectErrorStream(true).start();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return new Result(-1, out);
            }
            return new Result(process.exitValue(), out);
        } catch (IOException e) {
            return new Result(-1, e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(-1, "interrupted");
        }
    }
}

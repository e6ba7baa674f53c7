package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.Journey;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.SessionCalls;
import dev.rlmmcp.e2e.support.UserLaunch;
import dev.rlmmcp.e2e.support.UserServer;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The kernel runs the Python the user configured, not whichever one the sandbox happens to reach: the
 * {@code python3} on the user's PATH (a pyenv shim here), and a venv of the user's own with a package in it,
 * given by {@code --python}, by {@code RLM_PYTHON}, or by activating it (its bin/ first on PATH). Every other
 * setting is the default; the venv lives in the project, as {@code .venv} usually does.
 */
class UserJourneyPythonIT {

    private static final String PKG = "journeypkg";
    private static final String SHOW =
            "import sys\nprint(sys.version.split()[0])\nprint(sys.prefix)\nprint(sys.executable)";

    private static Path tmp;
    private static Path home;
    private static Path project;
    private static Path venv;

    @BeforeAll
    static void makeVenv() throws Exception {
        tmp = java.nio.file.Files.createTempDirectory("rlm-journey-python-");
        Journey.mode(tmp, "rwxr-xr-x");
        home = Journey.dirs(tmp, "home");
        Journey.mode(home, "rwx------");
        project = Journey.dirs(home, "code", "analysis");
        Journey.file(project, "notes.txt", "hello\n");
        venv = Journey.venv(List.of(), "python3", project.resolve(".venv"), PKG);
    }

    @AfterAll
    static void cleanUp() {
        Journey.deleteTree(tmp);
    }

    private static Map<String, String> env() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("HOME", home.toString());
        env.put("XDG_DATA_HOME", home.resolve(".local/share").toString());
        return env;
    }

    private static String kernelSays(UserLaunch launch, String code, String... flags) throws Exception {
        try (UserServer server = UserServer.start(launch, flags);
                McpDriver client = McpDriver.http(server.mcpUrl())) {
            JsonNode reply = new SessionCalls(client).ok("rlm_execute", Map.of("code", code));
            assertThat(reply.path("error").isObject())
                    .as("%s\nserver log:\n%s", reply, server.log())
                    .isFalse();
            return reply.path("stdout").asText();
        }
    }

    @Test
    void theKernelRunsThePython3OnTheUsersPath() throws Exception {
        // What the user's own `python3` is, asked from the same directory with the same environment.
        UserLaunch launch = UserLaunch.here(project, env());
        List<String> ask = new java.util.ArrayList<>(launch.command(List.of()));
        ask.removeLast(); // the launcher
        ask.addAll(List.of("python3", "-c", "import sys; print(sys.version.split()[0]); print(sys.prefix)"));
        String own = Journey.run(ask);
        String kernel = kernelSays(launch, "import sys\nprint(sys.version.split()[0])\nprint(sys.prefix)");
        assertThat(kernel)
                .as("version and prefix of the kernel's Python vs. the user's python3")
                .isEqualTo(own);
    }

    @ParameterizedTest(name = "given by {0}")
    @ValueSource(strings = {"--python", "RLM_PYTHON", "PATH"})
    void theKernelRunsTheUsersVenvWithItsPackages(String how) throws Exception {
        Path python = venv.resolve("bin/python");
        UserLaunch launch = UserLaunch.here(project, env());
        String[] flags = {};
        switch (how) {
            case "--python" -> flags = new String[] {"--python", python.toString()};
            case "RLM_PYTHON" -> launch = launch.with("RLM_PYTHON", python.toString());
            default ->
                launch = launch.with("VIRTUAL_ENV", venv.toString())
                        .with("PATH", venv.resolve("bin") + ":" + System.getenv("PATH"));
        }
        String out = kernelSays(launch, SHOW + "\nimport " + PKG + "\nprint(" + PKG + ".MAGIC)", flags);
        String[] lines = out.split("\n");
        assertThat(lines).as(out).hasSize(4);
        assertThat(Path.of(lines[1])).as("sys.prefix").isEqualTo(venv.toRealPath());
        assertThat(lines[2]).as("sys.executable").startsWith(venv.toString());
        assertThat(lines[3]).as("the venv's own package").isEqualTo("made by the journey test");
    }
}

package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.Journey;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.SessionCalls;
import dev.rlmmcp.e2e.support.UserLaunch;
import dev.rlmmcp.e2e.support.UserServer;
import dev.rlmmcp.testsupport.UnixListener;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A first-time user who is not root: an account of its own (created here, idempotently, and left in place)
 * with a 0750 home, data in {@code ~/projects/data/...} five levels down, a venv of its own, the server run
 * as that user through {@code bin/rlm-mcp} from a copy of the distribution it can read, with every default:
 * the sandbox, the data root (the working directory) and the truly default state directory
 * ({@code ~/.local/share/rlm-mcp} of that user, emptied before and after).
 */
class UserJourneyNonRootIT {

    private static final String PKG = "journeyuserpkg";

    private static Path home;
    private static Path dist;
    private static Path data;
    private static Path venv;
    private static Path stateDir;

    @BeforeAll
    static void setUpUser() throws Exception {
        assumeTrue(
                Journey.isRoot(),
                "the non-root journey creates a user account and runs the server as it, "
                        + "which needs root (CI runs the suite as root); skipped when not run as root");
        home = Journey.ensureUser();
        stateDir = home.resolve(".local/share/rlm-mcp");
        cleanHome();
        dist = Journey.distribution(Files.createTempDirectory("rlm-journey-dist-"));
        data = Journey.dirs(home, "projects", "data", "acme", "logs", "2024");
        Journey.typicalFiles(data);
        Journey.chownToUser(home.resolve("projects"));
        venv = Journey.venv(Journey.asUser(), "python3", home.resolve("venvs/journey"), PKG);
    }

    @AfterAll
    static void cleanUp() {
        if (home != null) {
            cleanHome();
            Journey.deleteTree(dist);
        }
    }

    private static void cleanHome() {
        Journey.deleteTree(home.resolve("projects"));
        Journey.deleteTree(home.resolve("venvs"));
        Journey.deleteTree(stateDir);
    }

    private static UserLaunch launch() {
        return new UserLaunch(dist.resolve("bin/rlm-mcp"), data, Map.of(), Journey.USER, home);
    }

    @Test
    void deepDataInTheUsersHomeOnTheTrulyDefaultStateDirectorySurvivesSigtermAndStdinEof() throws Exception {
        String id;
        try (UserServer server = UserServer.start(launch());
                McpDriver client = McpDriver.http(server.mcpUrl())) {
            SessionCalls calls = new SessionCalls(client);
            if (Files.isExecutable(Path.of("/usr/bin/bwrap"))) {
                assertThat(calls.ok("rlm_memory", Map.of()).toString())
                        .as("the default sandbox")
                        .contains("\"sandbox\":\"bwrap\"");
            }
            Journey.loadsTypicalFiles(calls, data, null);
            id = calls.ok("rlm_execute", Map.of("code", "mark = 'before sigterm'"))
                    .path("session_id")
                    .asText();
            server.terminate();
        }
        Path projectState = Journey.projectStateDir(stateDir);
        assertThat(projectState.resolve("sessions.db")).exists();
        assertThat(Files.getOwner(projectState).getName()).isEqualTo(Journey.USER);

        // The next conversation spawns it over stdio, as an agent does, and ends by closing stdin.
        McpDriver stdio = McpDriver.stdio(launch().command(List.of("stdio")));
        try {
            SessionCalls calls = new SessionCalls(stdio);
            JsonNode reply = calls.ok(
                    "rlm_execute",
                    Map.of(
                            "session_id",
                            id,
                            "code",
                            "print(mark, len(log), [r['city'] for r in rows], cfg['name'], len(notes))"));
            assertThat(reply.path("stdout").asText())
                    .as("after SIGTERM and a restart: %s", reply)
                    .isEqualTo("before sigterm 1000 ['Paris', 'Oslo', 'Lima'] acme 35\n");
            calls.ok("rlm_execute", Map.of("session_id", id, "code", "mark = 'before eof'"));
        } finally {
            stdio.close();
        }

        try (UserServer server = UserServer.start(launch());
                McpDriver client = McpDriver.http(server.mcpUrl())) {
            JsonNode reply = new SessionCalls(client)
                    .ok("rlm_execute", Map.of("session_id", id, "code", "print(mark, sum('ERROR' in l for l in log))"));
            assertThat(reply.path("stdout").asText())
                    .as("after stdin EOF and a restart: %s", reply)
                    .isEqualTo("before eof 100\n");
        }
    }

    @Test
    void theUsersOwnVenvRunsTheKernelWithItsPackage() throws Exception {
        Path python = venv.resolve("bin/python");
        try (UserServer server = UserServer.start(launch(), "--python", python.toString());
                McpDriver client = McpDriver.http(server.mcpUrl())) {
            JsonNode reply = new SessionCalls(client)
                    .ok(
                            "rlm_execute",
                            Map.of(
                                    "code",
                                    "import sys\nprint(sys.prefix)\nprint(sys.executable)\nimport " + PKG + "\nprint("
                                            + PKG + ".MAGIC)"));
            assertThat(reply.path("error").isObject()).as(reply.toString()).isFalse();
            assertThat(reply.path("stdout").asText())
                    .isEqualTo(venv.toRealPath() + "\n" + python + "\nmade by the journey test\n");
        }
    }

    @Test
    void aServiceOnAUnixSocketInTheUsersDataOrInTmpIsNotReachableFromKernelCode() throws Exception {
        try (UnixListener deep = UnixListener.at(data.resolve("run/agent/service.sock"));
                UnixListener tmp = UnixListener.at(
                        Path.of("/tmp", "rlm-journey-" + ProcessHandle.current().pid() + ".sock"));
                UserServer server = UserServer.start(launch(), "--blocked-imports", "none");
                McpDriver client = McpDriver.http(server.mcpUrl())) {
            SessionCalls calls = new SessionCalls(client);
            JsonNode reply = calls.ok("rlm_execute", Map.of("code", UnixListener.kernelCode(deep.path(), tmp.path())));
            if (Files.isExecutable(Path.of("/usr/bin/bwrap"))) {
                assertThat(reply.path("stdout").asText()).as(reply.toString()).isEqualTo(UnixListener.refusedOutput(2));
                assertThat(deep.accepted() + tmp.accepted())
                        .as("connections the host services accepted")
                        .isZero();
            }
        }
    }

    @Test
    void aKilledKernelOfTheUsersServerIsReplacedWithTheVariablesFromBefore() throws Exception {
        try (UserServer server = UserServer.start(launch());
                McpDriver client = McpDriver.http(server.mcpUrl())) {
            SessionCalls calls = new SessionCalls(client);
            calls.ok("rlm_load_file", Map.of("name", "log", "path", "app.log", "data_type", "lines"));
            String id = calls.ok("rlm_execute", Map.of("code", "errors = [l for l in log if 'ERROR' in l]"))
                    .path("session_id")
                    .asText();
            calls.awaitSnapshot(id);
            List<ProcessHandle> kernels = server.kernelOf(id);
            assertThat(kernels)
                    .as("the session's kernel among the server's processes")
                    .hasSize(1);
            kernels.getFirst().destroyForcibly();
            kernels.getFirst().onExit().get(10, java.util.concurrent.TimeUnit.SECONDS);
            client.call("rlm_execute", Map.of("code", "1")); // may report the crash
            JsonNode reply = calls.ok("rlm_execute", Map.of("code", "print(len(log), len(errors))"));
            assertThat(reply.path("stdout").asText()).as(reply.toString()).isEqualTo("1000 100\n");
        }
    }
}

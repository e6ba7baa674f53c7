package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.ClosedAfterEach;
import dev.rlmmcp.e2e.support.Journey;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.SessionCalls;
import dev.rlmmcp.e2e.support.UserLaunch;
import dev.rlmmcp.e2e.support.UserServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A user's data, read through {@code bin/rlm-mcp} with every default (sandbox auto, so bubblewrap where it
 * works; data root = the directory the server starts in; the default state directory, kept in a temporary
 * HOME): files 644 several directories deep, in a private (0700) home, of every data type, and a 1 GiB file.
 */
class UserJourneyDataIT {

    @TempDir
    Path tmp;

    private Path home;
    private UserServer server;
    private McpDriver client;

    @BeforeEach
    void home() throws Exception {
        // An ordinary directory tree: the temp dir itself is 0700 when made, a user's /tmp/x is not.
        Journey.mode(tmp, "rwxr-xr-x");
        home = Journey.dirs(tmp, "home");
        Journey.mode(home, "rwx------");
    }

    @RegisterExtension
    final ClosedAfterEach open = new ClosedAfterEach();

    private Map<String, String> env() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("HOME", home.toString());
        env.put("XDG_DATA_HOME", home.resolve(".local/share").toString());
        return env;
    }

    private SessionCalls start(Path cwd, String... flags) throws Exception {
        server = open.add(UserServer.start(UserLaunch.here(cwd, env()), flags));
        client = open.add(McpDriver.http(server.mcpUrl()));
        return new SessionCalls(client);
    }

    @Test
    void filesFourLevelsDeepInAPrivateHomeLoadWithTheDefaultDataRoot() throws Exception {
        Path data = Journey.dirs(home, "projects", "acme", "data", "2024");
        Journey.typicalFiles(data);
        SessionCalls calls = start(data);

        JsonNode memory = calls.ok("rlm_memory", Map.of());
        if (Files.isExecutable(Path.of("/usr/bin/bwrap"))) {
            assertThat(memory.toString())
                    .as("the default sandbox where bubblewrap is installed")
                    .contains("\"sandbox\":\"bwrap\"");
        }
        Journey.loadsTypicalFiles(calls, data, null);
        // The default state directory is the project's own below the (temporary) home, and holds the session.
        Path state = Journey.projectStateDir(home.resolve(".local/share/rlm-mcp"));
        assertThat(state.getFileName().toString()).startsWith("2024-");
        assertThat(state.resolve("sessions.db")).exists();
    }

    @Test
    void aDataRootThreeLevelsBelowAnOrdinaryDirectoryIsReadableToo() throws Exception {
        Path data = Journey.dirs(tmp, "srv", "shared", "datasets");
        Journey.typicalFiles(data);
        SessionCalls calls = start(data);
        Journey.loadsTypicalFiles(calls, data, null);
    }

    @Test
    void aOneGibibyteFileIsLoadedAndUsed() throws Exception {
        // Directly in the (0755) temp dir, so that only the size is under test here.
        long size = 1L << 30;
        Journey.BigFile big = Journey.bigFile(tmp.resolve("big.log"), size);
        try {
            SessionCalls calls = start(tmp, "--max-memory-mb", "4096");
            JsonNode loaded = calls.ok("rlm_load_file", Map.of("name", "big", "path", "big.log", "data_type", "text"));
            assertThat(loaded.toString()).doesNotContain("\"error\":{");
            JsonNode used = calls.ok(
                    "rlm_execute",
                    Map.of("code", "print(len(big), big.count('\\n'), big[:7], big[-1] == '\\n')", "timeout_s", 120));
            assertThat(used.path("stdout").asText())
                    .as(used.toString())
                    .isEqualTo(size + " " + big.lines() + " line 0  True\n");
            calls.ok("rlm_clear", Map.of("name", "big"));
        } finally {
            Files.deleteIfExists(tmp.resolve("big.log"));
        }
    }
}

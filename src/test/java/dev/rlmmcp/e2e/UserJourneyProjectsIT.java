package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.Journey;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.SessionCalls;
import dev.rlmmcp.e2e.support.StdioRpc;
import dev.rlmmcp.e2e.support.UserLaunch;
import dev.rlmmcp.e2e.support.UserServer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One user, several projects, many conversations: {@code bin/rlm-mcp} started in each project's directory
 * with every default, so every server of that user has the same default state directory (below a
 * temporary HOME here).
 */
class UserJourneyProjectsIT {

    @TempDir
    Path tmp;

    private Path home;

    @BeforeEach
    void setUp() throws Exception {
        Journey.mode(tmp, "rwxr-xr-x");
        home = Journey.dirs(tmp, "home");
        Journey.mode(home, "rwx------");
    }

    private UserLaunch launch(Path project) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("HOME", home.toString());
        env.put("XDG_DATA_HOME", home.resolve(".local/share").toString());
        return UserLaunch.here(project, env);
    }

    private static List<String> ids(SessionCalls calls) {
        List<String> ids = new ArrayList<>();
        calls.ok("rlm_sessions", Map.of())
                .path("sessions")
                .forEach(s -> ids.add(s.path("session_id").asText()));
        return ids;
    }

    @Test
    void twoServersForTwoProjectsAtOnceEachSeeOnlyTheirOwnSessions() throws Exception {
        Path alpha = Journey.dirs(home, "work", "alpha");
        Path beta = Journey.dirs(home, "work", "beta");
        try (UserServer a = UserServer.start(launch(alpha));
                UserServer b = UserServer.start(launch(beta));
                McpDriver clientA = McpDriver.http(a.mcpUrl());
                McpDriver clientB = McpDriver.http(b.mcpUrl())) {
            SessionCalls ca = new SessionCalls(clientA);
            SessionCalls cb = new SessionCalls(clientB);
            String aDefault = ca.ok("rlm_execute", Map.of("code", "project = 'alpha'"))
                    .path("session_id")
                    .asText();
            String bDefault = cb.ok("rlm_execute", Map.of("code", "project = 'beta'"))
                    .path("session_id")
                    .asText();
            String aNamed = ca.ok("rlm_init_context", Map.of("context_text", "alpha context"))
                    .path("session_id")
                    .asText();
            String bNamed = cb.ok("rlm_init_context", Map.of("context_text", "beta context"))
                    .path("session_id")
                    .asText();

            assertThat(ca.ok("rlm_execute", Map.of("code", "print(project)"))
                            .path("stdout")
                            .asText())
                    .isEqualTo("alpha\n");
            assertThat(cb.ok("rlm_execute", Map.of("code", "print(project)"))
                            .path("stdout")
                            .asText())
                    .isEqualTo("beta\n");
            assertThat(ca.run(aNamed, "print(context)")).isEqualTo("alpha context\n");
            assertThat(cb.run(bNamed, "print(context)")).isEqualTo("beta context\n");

            assertThat(ids(ca))
                    .as("rlm_sessions of the server for %s", alpha)
                    .contains(aDefault, aNamed)
                    .doesNotContain(bDefault, bNamed);
            assertThat(ids(cb))
                    .as("rlm_sessions of the server for %s", beta)
                    .contains(bDefault, bNamed)
                    .doesNotContain(aDefault, aNamed);
        }
    }

    @Test
    void theStateDirectoryFollowsHomeWhenXdgDataHomeIsUnset() throws Exception {
        // A user (or a test) that sets HOME expects the server's files below it, not below the passwd home.
        Path project = Journey.dirs(home, "work", "delta");
        Map<String, String> env = new LinkedHashMap<>();
        env.put("HOME", home.toString());
        env.put("XDG_DATA_HOME", null);
        try (UserServer server = UserServer.start(UserLaunch.here(project, env));
                McpDriver client = McpDriver.http(server.mcpUrl())) {
            new SessionCalls(client).ok("rlm_execute", Map.of("code", "kept = 1"));
            try (var dirs = java.nio.file.Files.list(home.resolve(".local/share/rlm-mcp/projects"))) {
                assertThat(dirs.map(d -> d.getFileName().toString()).toList())
                        .anySatisfy(name -> assertThat(name).startsWith("delta-"));
            }
        }
    }

    @Test
    void aNewConversationEachTimeDoesNotPileUpDefaultSessions() throws Exception {
        // An agent spawns the stdio server for every conversation in the project and uses its default
        // session: one that made no variable is gone with its conversation; one that holds variables
        // stays reachable by its id from the next conversation.
        Path project = Journey.dirs(home, "work", "gamma");
        List<String> stdio = launch(project).command(List.of("stdio"));
        List<String> empty = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            try (StdioRpc conversation = new StdioRpc(stdio)) {
                empty.add(conversation
                        .call("rlm_execute", Map.of("code", "print(" + i + ")"))
                        .path("session_id")
                        .asText());
                conversation.closeStdinAndWait(60);
            }
        }
        String kept;
        try (StdioRpc conversation = new StdioRpc(stdio)) {
            kept = conversation
                    .call("rlm_execute", Map.of("code", "turn = 4"))
                    .path("session_id")
                    .asText();
            conversation.closeStdinAndWait(60);
        }
        try (StdioRpc conversation = new StdioRpc(stdio)) {
            JsonNode sessions = conversation.call("rlm_sessions", Map.of());
            List<String> listed = new ArrayList<>();
            sessions.path("sessions")
                    .forEach(s -> listed.add(s.path("session_id").asText()));
            assertThat(listed)
                    .as("rlm_sessions after three empty conversations and one with a variable: %s", sessions)
                    .doesNotContainAnyElementsOf(empty)
                    .contains(kept);
            assertThat(conversation
                            .call("rlm_execute", Map.of("session_id", kept, "code", "print(turn)"))
                            .path("stdout")
                            .asText())
                    .isEqualTo("4\n");
            conversation.closeStdinAndWait(60);
        }
    }
}

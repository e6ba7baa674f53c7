package dev.rlmmcp.e2e;

import static dev.rlmmcp.e2e.support.McpDriver.json;
import static dev.rlmmcp.e2e.support.McpDriver.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.ClosedAfterEach;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sessions stay tidy on the default path: default sessions that hold nothing end with their
 * connection, those that hold variables stay reachable by id, rlm_sessions stays small, and each
 * project has its own state directory, used by one server at a time.
 */
class SessionsTidyIT {

    @TempDir
    Path tmp;

    @RegisterExtension
    final ClosedAfterEach open = new ClosedAfterEach();

    private static JsonNode ok(McpDriver client, String tool, Map<String, ?> args) {
        JsonNode result = client.call(tool, args);
        assertThat(result.path("isError").asBoolean())
                .as("%s %s -> %s", tool, args, result)
                .isFalse();
        return json(result);
    }

    private static List<String> listed(McpDriver client) {
        List<String> ids = new ArrayList<>();
        ok(client, "rlm_sessions", Map.of("limit", 200))
                .path("sessions")
                .forEach(s -> ids.add(s.path("session_id").asText()));
        return ids;
    }

    /** The session ids rlm_sessions lists, once {@code gone} is no longer among them (a closed SSE stream is noticed at the next keep-alive). */
    private static List<String> listedWithout(McpDriver client, String gone) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        List<String> ids = listed(client);
        while (ids.contains(gone) && System.nanoTime() < deadline) {
            Thread.sleep(100);
            ids = listed(client);
        }
        return ids;
    }

    @Test
    void overHttpAnEmptyDefaultSessionEndsWithItsClientAndOneWithVariablesStaysForOtherConnections() throws Exception {
        ServerProcess server = open.add(ServerProcess.http("--sse-keepalive-s", "1"));
        McpDriver watcher = open.add(McpDriver.http(server.mcpUrl()));

        McpDriver idle = McpDriver.http(server.mcpUrl());
        String empty = ok(idle, "rlm_execute", Map.of("code", "print('nothing kept')"))
                .path("session_id")
                .asText();
        McpDriver worker = McpDriver.http(server.mcpUrl());
        String holding = ok(worker, "rlm_execute", Map.of("code", "x = 41"))
                .path("session_id")
                .asText();
        assertThat(listed(watcher)).contains(empty, holding);
        idle.close();
        worker.close();

        assertThat(listedWithout(watcher, empty)).doesNotContain(empty).contains(holding);
        JsonNode reply = ok(watcher, "rlm_execute", Map.of("session_id", holding, "code", "print(x + 1)"));
        assertThat(reply.path("stdout").asText()).isEqualTo("42\n");

        McpDriver sse = McpDriver.sse(server.baseUrl() + "/sse");
        String sseEmpty = ok(sse, "rlm_execute", Map.of("code", "print(1)"))
                .path("session_id")
                .asText();
        sse.close();
        assertThat(listedWithout(watcher, sseEmpty)).doesNotContain(sseEmpty).contains(holding);
    }

    @Test
    void overStdioAnEmptyDefaultSessionIsNotKeptWhenStdinCloses() throws Exception {
        Path state = tmp.resolve("state");
        McpDriver stdio = McpDriver.stdio(ServerProcess.command(List.of("stdio", "--state-dir", state.toString())));
        String empty = ok(stdio, "rlm_execute", Map.of("code", "print(1)"))
                .path("session_id")
                .asText();
        String named = ok(stdio, "rlm_init_context", Map.of("context_text", "abc"))
                .path("session_id")
                .asText();
        stdio.close();

        ServerProcess server = open.add(ServerProcess.http("--state-dir", state.toString()));
        McpDriver client = open.add(McpDriver.http(server.mcpUrl()));
        assertThat(listed(client)).contains(named).doesNotContain(empty);
    }

    @Test
    void fortySessionsListInUnderEightKilobytesPagedFilteredAndInFullOnRequest() throws IOException {
        ServerProcess server = open.add(ServerProcess.http());
        McpDriver client = open.add(McpDriver.http(server.mcpUrl()));
        List<String> made = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            made.add(ok(client, "rlm_init_context", Map.of("max_steps", 50))
                    .path("session_id")
                    .asText());
        }
        ok(client, "rlm_finalize", Map.of("session_id", made.get(7), "final_text", "done"));

        JsonNode result = client.call("rlm_sessions", Map.of());
        int compactBytes = text(result).getBytes(StandardCharsets.UTF_8).length;
        JsonNode page = json(result);
        assertThat(compactBytes).isLessThanOrEqualTo(8192);
        assertThat(page.path("count").asInt()).isEqualTo(20);
        assertThat(page.path("total").asInt()).isEqualTo(40);
        assertThat(page.path("sessions").path(0).path("session_id").asText()).isEqualTo(made.get(7));
        assertThat(page.path("sessions").path(0).has("limits")).isFalse();

        JsonNode all = client.call("rlm_sessions", Map.of("limit", 40));
        int allCompactBytes = text(all).getBytes(StandardCharsets.UTF_8).length;
        assertThat(allCompactBytes).isLessThanOrEqualTo(8192);

        List<String> paged = new ArrayList<>();
        page.path("sessions").forEach(s -> paged.add(s.path("session_id").asText()));
        JsonNode next = ok(
                client,
                "rlm_sessions",
                Map.of("offset", page.path("next_offset").asInt()));
        next.path("sessions").forEach(s -> paged.add(s.path("session_id").asText()));
        assertThat(next.has("next_offset")).isFalse();
        assertThat(paged).containsExactlyInAnyOrderElementsOf(made);

        JsonNode finalized = ok(client, "rlm_sessions", Map.of("state", "finalized"));
        assertThat(finalized.path("total").asInt()).isEqualTo(1);
        assertThat(finalized.path("sessions").path(0).path("session_id").asText())
                .isEqualTo(made.get(7));

        JsonNode verboseResult = client.call("rlm_sessions", Map.of("verbose", true, "limit", 40));
        int verboseBytes = text(verboseResult).getBytes(StandardCharsets.UTF_8).length;
        JsonNode verbose = json(verboseResult);
        assertThat(verbose.path("sessions")).hasSize(40).allSatisfy(s -> {
            assertThat(s.path("limits").path("max_steps").asInt()).isEqualTo(50);
            assertThat(s.has("created")).isTrue();
            assertThat(s.has("snapshot_at")).isTrue();
        });
        System.out.printf(
                "rlm_sessions, 40 sessions: default page %d bytes, all 40 compact %d bytes, "
                        + "all 40 verbose %d bytes%n",
                compactBytes, allCompactBytes, verboseBytes);
    }

    @Test
    void serversForTwoProjectsOnTheDefaultStateDirectoryDoNotSeeEachOthersSessions() throws Exception {
        Map<String, String> env = Map.of("XDG_DATA_HOME", tmp.resolve("xdg").toString());
        Path first = Files.createDirectories(tmp.resolve("one/data"));
        Path second = Files.createDirectories(tmp.resolve("two/data"));
        ServerProcess one = open.add(ServerProcess.http(env, first));
        ServerProcess two = open.add(ServerProcess.http(env, second));
        McpDriver a = open.add(McpDriver.http(one.mcpUrl()));
        McpDriver b = open.add(McpDriver.http(two.mcpUrl()));
        String ofOne = ok(a, "rlm_init_context", Map.of("context_text", "one"))
                .path("session_id")
                .asText();
        String ofTwo = ok(b, "rlm_init_context", Map.of("context_text", "two"))
                .path("session_id")
                .asText();

        assertThat(listed(a)).contains(ofOne).doesNotContain(ofTwo);
        assertThat(listed(b)).contains(ofTwo).doesNotContain(ofOne);
        try (var dirs = Files.list(tmp.resolve("xdg/rlm-mcp/projects"))) {
            assertThat(dirs.map(p -> p.getFileName().toString()))
                    .hasSize(2)
                    .allMatch(n -> n.matches("data-[0-9a-f]{10}"));
        }

        ServerProcess alsoOne = open.add(ServerProcess.http(env, first));
        assertThat(alsoOne.log()).contains("is in use by another rlm-mcp server (pid " + one.pid() + ")");
        McpDriver c = open.add(McpDriver.http(alsoOne.mcpUrl()));
        assertThat(listed(c)).doesNotContain(ofOne, ofTwo);
        assertThat(ok(c, "rlm_execute", Map.of("code", "print(6 * 7)"))
                        .path("stdout")
                        .asText())
                .isEqualTo("42\n");

        one.terminate();
        ServerProcess oneAgain = open.add(ServerProcess.http(env, first));
        assertThat(listed(open.add(McpDriver.http(oneAgain.mcpUrl()))))
                .contains(ofOne)
                .doesNotContain(ofTwo);
    }

    @Test
    void aSecondServerOnTheSameStateDirRefusesToStartWithOneLineAndTheFlagsHelp() throws Exception {
        Path state = tmp.resolve("shared");
        ServerProcess first = open.add(ServerProcess.http("--state-dir", state.toString()));
        Process second = new ProcessBuilder(
                        ServerProcess.command(List.of("serve", "--port", "0", "--state-dir", state.toString())))
                .redirectErrorStream(true)
                .start();
        assertThat(second.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String output = new String(second.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        List<String> lines =
                output.lines().filter(l -> !l.startsWith("WARNING:")).toList();
        assertThat(second.exitValue()).as(output).isEqualTo(2);
        assertThat(lines).as(output).hasSize(2);
        assertThat(lines.get(0))
                .isEqualTo("rlm-mcp: the state directory " + state
                        + " is in use by another rlm-mcp server (pid " + first.pid()
                        + "); stop that server, or give this "
                        + "one its own --state-dir (or --ephemeral)");
        assertThat(lines.get(1)).startsWith("  --state-dir=DIR ");
        McpDriver client = open.add(McpDriver.http(first.mcpUrl()));
        assertThat(ok(client, "rlm_execute", Map.of("code", "print('first still serves')"))
                        .path("stdout")
                        .asText())
                .isEqualTo("first still serves\n");
    }
}

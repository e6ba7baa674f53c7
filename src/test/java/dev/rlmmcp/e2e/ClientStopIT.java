package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.ClosedAfterEach;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import dev.rlmmcp.e2e.support.SessionCalls;
import dev.rlmmcp.e2e.support.StdioRpc;
import dev.rlmmcp.e2e.support.UserServer;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Nothing a reply reported is lost however a client stops the server right after a step: the real
 * server (default sandbox, default flags but a temporary --state-dir) started in a process group of
 * its own as the clients start it, stopped as Codex stops it (SIGTERM to the group, SIGKILL 250 ms
 * later), as Claude Code does (SIGINT, SIGTERM at +100 ms, SIGKILL at +500 ms) and by a {@code kill -9}
 * 0.1 s after the reply, over stdio and over HTTP, while a call runs on another session (so that a
 * graceful stop, which lets calls under way finish first, cannot save the step in time either); then
 * a new server on the same state directory resumes the session by its id. No kernel outlives the server.
 */
class ClientStopIT {

    private static final String FIRST = "first = list(range(10))";
    private static final String LAST = "last = {'k': 'v', 'n': 42}";
    private static final String CHECK = "print(first, last)";
    private static final String EXPECTED = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9] {'k': 'v', 'n': 42}\n";
    /** A call still running on another session when the client stops the server. */
    private static final String LONG = "import time\ntime.sleep(60)";
    /** Too large to write before the reply (an in-memory size of some 200 MB), and slow to pickle. */
    private static final String BIG = "big = [str(i) for i in range(3_000_000)]";

    @TempDir
    Path state;

    @RegisterExtension
    final ClosedAfterEach open = new ClosedAfterEach();

    /** How a client stops the server whose pid (and process group) is {@code pid}, right after a reply. */
    private enum Stop {
        CODEX {
            @Override
            void apply(long pid) throws Exception {
                signal("TERM", -pid);
                Thread.sleep(250);
                signal("KILL", -pid);
            }
        },
        CLAUDE_CODE {
            @Override
            void apply(long pid) throws Exception {
                signal("INT", pid);
                Thread.sleep(100);
                signal("TERM", pid);
                Thread.sleep(400);
                signal("KILL", pid);
            }
        },
        KILL_9 {
            @Override
            void apply(long pid) throws Exception {
                Thread.sleep(100);
                signal("KILL", pid);
            }
        };

        abstract void apply(long pid) throws Exception;
    }

    @Test
    void codexStoppingTheStdioServerLosesNothing() throws Exception {
        overStdio(Stop.CODEX);
    }

    @Test
    void claudeCodeStoppingTheStdioServerLosesNothing() throws Exception {
        overStdio(Stop.CLAUDE_CODE);
    }

    @Test
    void killMinus9OfTheStdioServerRightAfterAReplyLosesNothing() throws Exception {
        overStdio(Stop.KILL_9);
    }

    /** Plain kernels (no sandbox) die with the server too: the busy one cannot leave on its stdin's end. */
    @Test
    void codexStoppingAServerWithPlainKernelsLosesNothingAndLeavesNoKernel() throws Exception {
        overStdio(Stop.CODEX, "--sandbox", "process");
    }

    @Test
    void codexStoppingTheHttpServerLosesNothing() throws Exception {
        overHttp(Stop.CODEX);
    }

    @Test
    void claudeCodeStoppingTheHttpServerLosesNothing() throws Exception {
        overHttp(Stop.CLAUDE_CODE);
    }

    @Test
    void killMinus9OfTheHttpServerRightAfterAReplyLosesNothing() throws Exception {
        overHttp(Stop.KILL_9);
    }

    @Test
    void aChangeTooLargeToWriteBeforeTheReplyIsNamedThenWrittenRightAfter() throws Exception {
        ServerProcess server = http();
        McpDriver client = open.add(McpDriver.http(server.mcpUrl()));
        SessionCalls calls = new SessionCalls(client);
        String id = calls.ok("rlm_init_context", Map.of()).path("session_id").asText();
        JsonNode reply = calls.ok("rlm_execute", Map.of("session_id", id, "code", "small = 1\n" + BIG));
        assertThat(names(reply.path("still_writing"))).as(reply.toString()).containsExactly("big");
        String text = McpDriver.text(client.callAsIs("rlm_execute", Map.of("session_id", id, "code", "big2 = big[:]")));
        assertThat(text).as("the default text reply's footer").contains("still being written: big2");
        // the next call runs once the write is done
        assertThat(calls.ok("rlm_var_info", Map.of("session_id", id, "name", "big"))
                        .path("persisted")
                        .asText())
                .isEqualTo("saved");
        Stop.KILL_9.apply(server.pid());
        awaitExit(server.pid());

        SessionCalls after = new SessionCalls(open.add(McpDriver.http(http().mcpUrl())));
        JsonNode back = after.ok("rlm_execute", Map.of("session_id", id, "code", "print(small, len(big), big[-1])"));
        assertThat(back.path("stdout").asText()).as(back.toString()).isEqualTo("1 3000000 2999999\n");
        assertThat(back.has("lost_at_stop")).as(back.toString()).isFalse();
    }

    @Test
    void theFirstReplyAfterAStopThatCutAWriteShortNamesWhatWasLost() throws Exception {
        String id;
        try (StdioRpc server = stdio()) {
            id = server.call("rlm_init_context", Map.of()).path("session_id").asText();
            server.call("rlm_execute", Map.of("session_id", id, "code", "small = 1"));
            JsonNode reply = server.call("rlm_execute", Map.of("session_id", id, "code", BIG));
            assertThat(names(reply.path("still_writing"))).as(reply.toString()).containsExactly("big");
            signal("KILL", server.pid());
            awaitExit(server.pid());
        }
        try (StdioRpc server = stdio()) {
            JsonNode first = server.request(
                    "tools/call",
                    Map.of("name", "rlm_execute", "arguments", Map.of("session_id", id, "code", "print(small)")));
            assertThat(McpDriver.text(first))
                    .as("the default text reply")
                    .contains("lost when the server stopped, still being written then: big");
            JsonNode vars = server.call("rlm_list_vars", Map.of("session_id", id));
            assertThat(vars.toString()).contains("\"big\"").contains("still being written when the server stopped");
            JsonNode again = server.call("rlm_execute", Map.of("session_id", id, "code", "print(small)"));
            assertThat(again.path("stdout").asText()).isEqualTo("1\n");
            assertThat(again.has("lost_at_stop")).as("named once: %s", again).isFalse();
        }
    }

    @Test
    void theFirstJsonReplyAfterAStopThatCutAWriteShortNamesWhatWasLost() throws Exception {
        ServerProcess server = http();
        SessionCalls calls = new SessionCalls(open.add(McpDriver.http(server.mcpUrl())));
        String id = calls.ok("rlm_init_context", Map.of()).path("session_id").asText();
        JsonNode reply = calls.ok("rlm_execute", Map.of("session_id", id, "code", BIG));
        assertThat(names(reply.path("still_writing"))).as(reply.toString()).containsExactly("big");
        signal("KILL", server.pid());
        awaitExit(server.pid());

        SessionCalls after = new SessionCalls(open.add(McpDriver.http(http().mcpUrl())));
        JsonNode first = after.ok("rlm_list_vars", Map.of("session_id", id));
        assertThat(names(first.path("lost_at_stop"))).as(first.toString()).containsExactly("big");
    }

    /** The stdio scenario: two steps, the client's stop right after the second, a new server resumes. */
    private void overStdio(Stop stop, String... flags) throws Exception {
        String id;
        List<ProcessHandle> kernels;
        try (StdioRpc server = stdio(flags)) {
            id = server.call("rlm_init_context", Map.of()).path("session_id").asText();
            String other =
                    server.call("rlm_init_context", Map.of()).path("session_id").asText();
            server.call("rlm_execute", Map.of("session_id", id, "code", FIRST));
            server.call("rlm_execute", Map.of("session_id", other, "code", "ready = 1"));
            server.callWithoutWaiting("rlm_execute", Map.of("session_id", other, "code", LONG, "timeout_s", 120));
            server.call("rlm_execute", Map.of("session_id", id, "code", LAST));
            kernels = kernelsOf(server.pid());
            assertThat(kernels).as("the kernels of both sessions").hasSizeGreaterThanOrEqualTo(2);
            stop.apply(server.pid());
            awaitExit(server.pid());
        }
        assertGone(kernels);
        try (StdioRpc server = stdio(flags)) {
            JsonNode back = server.call("rlm_execute", Map.of("session_id", id, "code", CHECK));
            assertThat(back.path("stdout").asText())
                    .as("after %s: %s", stop, back)
                    .isEqualTo(EXPECTED);
            assertThat(back.has("lost_at_stop")).as(back.toString()).isFalse();
        }
    }

    /** The same over HTTP. */
    private void overHttp(Stop stop) throws Exception {
        ServerProcess server = http();
        McpDriver client = open.add(McpDriver.http(server.mcpUrl()));
        SessionCalls calls = new SessionCalls(client);
        String id = calls.ok("rlm_init_context", Map.of()).path("session_id").asText();
        String other = calls.ok("rlm_init_context", Map.of()).path("session_id").asText();
        calls.run(id, FIRST);
        calls.run(other, "ready = 1");
        client.callAsync("rlm_execute", Map.of("session_id", other, "code", LONG, "timeout_s", 120), false);
        calls.run(id, LAST);
        List<ProcessHandle> kernels = kernelsOf(server.pid());
        assertThat(kernels).as("the kernels of both sessions").hasSizeGreaterThanOrEqualTo(2);
        stop.apply(server.pid());
        awaitExit(server.pid());
        assertGone(kernels);

        SessionCalls after = new SessionCalls(open.add(McpDriver.http(http().mcpUrl())));
        JsonNode back = after.ok("rlm_execute", Map.of("session_id", id, "code", CHECK));
        assertThat(back.path("stdout").asText()).as("after %s: %s", stop, back).isEqualTo(EXPECTED);
        assertThat(back.has("lost_at_stop")).as(back.toString()).isFalse();
    }

    /** {@code rlm-mcp serve} in a session (and process group) of its own, as a client starts a server. */
    private ServerProcess http() throws IOException {
        return open.add(ServerProcess.http(List.of("setsid"), Map.of(), null, "--state-dir", state.toString()));
    }

    /** {@code rlm-mcp stdio} in a session of its own (setsid execs it: its pid is the server's). */
    private StdioRpc stdio(String... flags) throws IOException {
        List<String> args = new ArrayList<>(List.of("stdio", "--state-dir", state.toString()));
        args.addAll(List.of(flags));
        List<String> command = new ArrayList<>(List.of("setsid"));
        command.addAll(ServerProcess.command(args));
        return open.add(new StdioRpc(command));
    }

    /** kill(1) with a signal to a process, or to a process group if {@code target} is negative. */
    private static void signal(String signal, long target) throws Exception {
        Process kill = new ProcessBuilder("kill", "-s", signal, "--", Long.toString(target))
                .redirectErrorStream(true)
                .start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
    }

    private static void awaitExit(long pid) throws Exception {
        ProcessHandle handle = ProcessHandle.of(pid).orElse(null);
        if (handle != null) {
            handle.onExit().get(30, TimeUnit.SECONDS);
        }
    }

    /** The server's kernels: the Python processes running the harness, sandboxed or not. */
    private static List<ProcessHandle> kernelsOf(long server) {
        return ProcessHandle.of(server)
                .orElseThrow()
                .descendants()
                .filter(p -> {
                    List<String> argv = UserServer.argv(p.pid());
                    return !argv.isEmpty()
                            && Path.of(argv.getFirst()).getFileName().toString().startsWith("python")
                            && argv.stream().anyMatch(a -> a.contains("/harness"));
                })
                .toList();
    }

    /** Every kernel the server had has ended with it (none is left orphaned). */
    private static void assertGone(List<ProcessHandle> kernels) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (kernels.stream().anyMatch(ProcessHandle::isAlive) && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(kernels.stream()
                        .filter(ProcessHandle::isAlive)
                        .map(ProcessHandle::pid)
                        .toList())
                .as("kernels left running after the server ended")
                .isEmpty();
    }

    private static List<String> names(JsonNode array) {
        List<String> names = new ArrayList<>();
        array.forEach(n -> names.add(n.asText()));
        return names;
    }
}

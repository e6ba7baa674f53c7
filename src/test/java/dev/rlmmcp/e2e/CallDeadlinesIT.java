package dev.rlmmcp.e2e;

import static dev.rlmmcp.e2e.support.McpDriver.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.ClosedAfterEach;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import dev.rlmmcp.e2e.support.SessionCalls;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every call ends within its time limit, the interrupt's grace and the kill's, whatever the kernel
 * does or does not send, through both transports (stdio calls wait on platform threads, HTTP calls on
 * virtual threads) in the default sandbox: a thread of the kernel's that takes the server's requests
 * off the pipe (a step's, a snapshot's written before the next call or in the background, a listing's),
 * code that blocks SIGINT and sleeps in C, a request pipe closed, stray and malformed frames, a
 * process stopped. Each such call is answered with what was kept and lost, and the next call works
 * on a fresh kernel restored from the snapshot: the session is never left busy.
 */
class CallDeadlinesIT {

    private static final int TIMEOUT_S = 3;
    /** The default interrupt grace, the kill's grace (Kernel.KILL_GRACE), and a fresh kernel's start on a busy machine. */
    private static final Duration BOUND = Duration.ofSeconds(TIMEOUT_S + 2 + 2 + 4);

    /** Kernel code reaches past the import policy (a guard rail, not a boundary) to the harness's pipes. */
    private static final String REACH = """
            imp = print.__self__.__import__
            os, threading, time, struct, signal = (imp(m) for m in ('os', 'threading', 'time', 'struct', 'signal'))
            channel = imp('rlm_harness').KERNEL.callbacks.channel
            requests, replies = channel.reader.raw.fileno(), channel.fd_out
            """;
    /** Starts a thread that reads whatever the server sends next, so the harness never sees it. */
    private static final String THIEF = REACH
            + "threading.Thread(target=lambda: [os.read(requests, 1 << 20) for _ in range(1000)], daemon=True).start()\n";
    /** A value too large to write before the step's reply: its snapshot's request follows the reply. */
    private static final String BIG = "big = b'x' * (32 << 20)\n";
    /**
     * The same, changing no variable (the next request the server sends is a step's, not a snapshot's),
     * and certain to take it: the harness's own reader is pointed at a pipe nobody writes, so the thread
     * does not race it for the request pipe.
     */
    private static final String QUIET_THIEF = "(lambda imp: (lambda ch: (imp('threading').Thread(target=lambda "
            + "fd=ch.reader.raw.fileno(): [imp('os').read(fd, 1 << 20) for _ in range(1000)], daemon=True).start(), "
            + "setattr(ch, 'reader', imp('io').open(imp('os').pipe()[0], 'rb'))))"
            + "(imp('rlm_harness').KERNEL.callbacks.channel))(print.__self__.__import__)\n";

    @TempDir
    java.nio.file.Path state;

    @RegisterExtension
    final ClosedAfterEach open = new ClosedAfterEach();

    private McpDriver client;
    private SessionCalls calls;

    private void start(String transport, String... extra) throws Exception {
        List<String> args = new ArrayList<>(List.of("--state-dir", state.toString(), "--timeout-s", "" + TIMEOUT_S));
        args.addAll(List.of(extra));
        if (transport.equals("stdio")) {
            List<String> command = new ArrayList<>(List.of("stdio"));
            command.addAll(args);
            client = McpDriver.stdio(ServerProcess.command(command));
        } else {
            ServerProcess server = ServerProcess.http(args.toArray(String[]::new));
            open.add(server);
            client = McpDriver.http(server.mcpUrl());
        }
        open.add(client);
        calls = new SessionCalls(client);
    }

    /** A session holding {@code kept = 7} in its snapshot. */
    private String session() throws Exception {
        String id = calls.ok("rlm_init_context", Map.of()).path("session_id").asText();
        calls.run(id, "kept = 7");
        calls.awaitSnapshot(id);
        return id;
    }

    /** A call, timed: it must be answered within the bound. */
    private JsonNode timed(String tool, Map<String, ?> args) {
        long started = System.nanoTime();
        JsonNode line = client.callRaw(tool, args, false);
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        assertThat(took).as("%s answered after %s: %s", tool, took, line).isLessThan(BOUND);
        assertThat(line.path("ok").asBoolean()).as(line.toString()).isTrue();
        return line.path("result");
    }

    private JsonNode execute(String id, String code) {
        return json(timed("rlm_execute", Map.of("session_id", id, "code", code, "timeout_s", TIMEOUT_S)));
    }

    /** The session works again, on a fresh kernel that restored the snapshot; returns that call's reply. */
    private JsonNode worksAgain(String id) {
        JsonNode reply = execute(id, "print(kept)");
        assertThat(reply.path("status").asText()).as(reply.toString()).isEqualTo("ok");
        assertThat(reply.path("stdout").asText()).isEqualTo("7\n");
        JsonNode again = execute(id, "print(kept + 1)");
        assertThat(again.path("stdout").asText()).as(again.toString()).isEqualTo("8\n");
        return reply;
    }

    private static void killedAndRestored(JsonNode reply, String why) {
        assertThat(reply.path("status").asText()).as(reply.toString()).isEqualTo("killed");
        assertThat(reply.path("message").asText())
                .as(reply.toString())
                .contains(why)
                .contains("A fresh kernel is ready with the snapshot");
    }

    @ParameterizedTest
    @ValueSource(strings = {"stdio", "http"})
    void aThreadThatTakesTheNextStepsRequestGetsItKilledWithinTheStepsLimit(String transport) throws Exception {
        start(transport);
        String id = session();
        execute(id, QUIET_THIEF);
        killedAndRestored(execute(id, "print(kept)"), "ignored the interrupt");
        worksAgain(id);
    }

    /**
     * A step whose change is too large to write before its reply leaves a snapshot to write after it, and
     * a kernel thread reads the requests. Which request it takes is a race with the harness's own read,
     * and the next call ends within its limit whichever it is: the snapshot's, written in the background
     * (the call waits for it; the kernel is killed and the call refused without running) or first by
     * the call itself (the kernel is killed and restored), or the call's own (killed and restored).
     */
    @ParameterizedTest
    @ValueSource(strings = {"stdio", "http"})
    void aThreadThatTakesTheSnapshotRequestAfterAStepEndsTheNextCallWithinItsLimit(String transport) throws Exception {
        start(transport);
        String id = session();
        JsonNode big = execute(id, THIEF + BIG);
        assertThat(big.path("still_writing").toString()).as(big.toString()).contains("big");
        Thread.sleep(300);
        JsonNode next = timed("rlm_execute", Map.of("session_id", id, "code", "print(kept)", "timeout_s", TIMEOUT_S));
        assertThat(McpDriver.text(next))
                .as(next.toString())
                .satisfiesAnyOf(
                        t -> assertThat(t)
                                .contains("TIMEOUT", "did not finish: the kernel was killed", "this call did not run"),
                        t -> assertThat(t)
                                .contains("\"killed\"", "did not answer the server's request to write its snapshot"),
                        t -> assertThat(t).contains("\"killed\"", "ignored the interrupt"));
        worksAgain(id);
    }

    @ParameterizedTest
    @ValueSource(strings = {"stdio", "http"})
    void everyCallThatIsNotAStepEndsWithinItsLimitWhenItsRequestIsTaken(String transport) throws Exception {
        start(transport, "--max-timeout-s", "" + TIMEOUT_S); // a load's limit
        String id = session();
        Map<String, Map<String, Object>> tools = new java.util.LinkedHashMap<>();
        tools.put("rlm_list_vars", Map.of());
        tools.put("rlm_var_info", Map.of("name", "kept"));
        tools.put("rlm_memory", Map.of());
        tools.put("rlm_get_var", Map.of("var_name", "kept"));
        tools.put("rlm_clear", Map.of("name", "kept2"));
        tools.put("rlm_load_data", Map.of("name", "more", "data", "x"));
        for (var tool : tools.entrySet()) {
            execute(id, QUIET_THIEF);
            Map<String, Object> args = new HashMap<>(tool.getValue());
            args.put("session_id", id);
            JsonNode result = timed(tool.getKey(), args);
            assertThat(result.path("isError").asBoolean()).as(result.toString()).isTrue();
            assertThat(McpDriver.text(result))
                    .as(tool.getKey())
                    .contains("did not answer the server's")
                    .contains("A fresh kernel is ready with the snapshot");
            worksAgain(id);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"stdio", "http"})
    void codeThatBlocksTheInterruptAndSleepsInCIsKilledWithinItsLimit(String transport) throws Exception {
        start(transport);
        String id = session();
        killedAndRestored(
                execute(
                        id,
                        REACH + "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})\n"
                                + "time.sleep(120)\n"),
                "ignored the interrupt");
        worksAgain(id);
    }

    @ParameterizedTest
    @ValueSource(strings = {"stdio", "http"})
    void strayFramesWithoutEndAreKilledAtTheLimitAndAMalformedOneAtOnce(String transport) throws Exception {
        start(transport);
        String id = session();
        killedAndRestored(
                execute(
                        id,
                        REACH + "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                                + "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                                + "body = b'{\"id\": 424242, \"ok\": true}'\n"
                                + "while True:\n    os.write(replies, struct.pack('>IQ', len(body), 0) + body)\n    time.sleep(0.01)\n"),
                "ignored the interrupt");
        worksAgain(id);
        JsonNode reply =
                execute(id, REACH + "os.write(replies, struct.pack('>IQ', 5, 0) + b'nope!')\ntime.sleep(120)\n");
        assertThat(reply.path("status").asText()).as(reply.toString()).isEqualTo("crashed");
        assertThat(reply.path("message").asText()).contains("broke the protocol");
        worksAgain(id);
    }

    @ParameterizedTest
    @ValueSource(strings = {"stdio", "http"})
    void aClosedRequestPipeOrAStoppedProcessEndsTheNextCallsWithinTheirLimit(String transport) throws Exception {
        start(transport);
        String id = session();
        execute(id, REACH + "os.close(requests)\n");
        // the harness ends at its next read; the next call finds it dead, or dies writing to it
        JsonNode first = execute(id, "print(kept)");
        if (first.path("status").asText().equals("ok")) {
            assertThat(first.path("kernel_restarted").path("message").asText())
                    .as(first.toString())
                    .contains("A fresh kernel is ready with the snapshot");
        } else {
            assertThat(first.path("status").asText()).as(first.toString()).isEqualTo("crashed");
        }
        worksAgain(id);
        execute(
                id,
                REACH + "threading.Thread(target=lambda: (time.sleep(0.3), os.kill(os.getpid(), signal.SIGSTOP)))"
                        + ".start()\n");
        Thread.sleep(600);
        JsonNode listed = timed("rlm_list_vars", Map.of("session_id", id));
        assertThat(McpDriver.text(listed)).as(listed.toString()).contains("stopped (SIGSTOP)");
        worksAgain(id);
    }
}

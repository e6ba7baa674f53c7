package dev.rlmmcp.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SessionTest {

    @TempDir
    Path dir;

    private Sessions sessions;
    private Session session;

    @BeforeEach
    void start() {
        sessions = new Sessions(
                new KernelFactory(TestSettings.in(dir, 4L * 1024 * 1024), new ProcessLauncher(), new ObjectMapper()));
        session = sessions.resolve(null, "test-connection");
    }

    @AfterEach
    void stop() {
        sessions.close();
    }

    private ObjectNode run(String code) {
        return TestReplies.step(session.execute(StepRequest.of(code, Duration.ofSeconds(30))));
    }

    @Test
    void aLoadIntoANameTheHarnessReservesIsRefusedBeforeAnyByteIsSentAndLosesNothing() {
        run("kept = 41");
        for (String reserved : new String[] {"llm_query", "mcp_servers", "_last_output"}) {
            assertThatThrownBy(() -> session.loadData(reserved, "x".repeat(1000), DataType.TEXT, CallContext.NONE))
                    .isInstanceOfSatisfying(RlmException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                        assertThat(e.argument()).isEqualTo("name");
                        assertThat(e.getMessage()).contains("'" + reserved + "' is reserved");
                    });
        }
        assertThat(run("print(kept + 1, callable(llm_query))").path("stdout").asText())
                .isEqualTo("42 True\n");
    }

    @Test
    void variablesPersistBetweenCallsAndChangesAreReported() {
        ObjectNode first = run("x = 40\ny = 'a'");
        assertThat(first.path("status").asText()).isEqualTo("ok");
        assertThat(first.path("variables_changed")).extracting(JsonNode::asText).containsExactly("x", "y");
        ObjectNode second = run("x += 2\nx");
        assertThat(second.path("stdout").asText()).isEqualTo("42\n");
        assertThat(second.path("variables_changed"))
                .extracting(JsonNode::asText)
                .containsExactly("x");
        assertThat(run("del y").path("variables_deleted"))
                .extracting(JsonNode::asText)
                .containsExactly("y");
    }

    @Test
    void printsFromPythonCAndChildProcessesAreCapturedWithoutCorruptingTheProtocol() {
        ObjectNode reply = run("""
                import os, sys, subprocess
                print('py')
                os.write(1, b'fd1\\n')
                os.write(2, b'fd2\\n')
                subprocess.run(['echo', 'child'])
                sys.stdout.write('tail\\n')
                sys.stdout = open(os.devnull, 'w')
                """);
        assertThat(reply.path("stdout").asText()).contains("py\n", "fd1\n", "child\n", "tail\n");
        assertThat(reply.path("stderr").asText()).isEqualTo("fd2\n");
        assertThat(run("print('still here')").path("stdout").asText()).isEqualTo("still here\n");
    }

    @Test
    void exceptionsCarryATracebackWithoutHarnessFrames() {
        ObjectNode reply = run("def f():\n    return 1 / 0\nf()");
        assertThat(reply.path("status").asText()).isEqualTo("error");
        JsonNode error = reply.path("error");
        assertThat(error.path("type").asText()).isEqualTo("ZeroDivisionError");
        assertThat(error.path("traceback").asText())
                .contains("<cell", "return 1 / 0")
                .doesNotContain("harness");
        ObjectNode syntax = run("x = (1");
        assertThat(syntax.path("error").path("type").asText()).isEqualTo("SyntaxError");
        assertThat(syntax.path("error").path("traceback").asText()).doesNotContain("ast.py");
        assertThat(run("raise SystemExit(3)").path("error").path("type").asText())
                .isEqualTo("SystemExit");
        assertThat(run("print('alive')").path("stdout").asText()).isEqualTo("alive\n");
    }

    @Test
    void longOutputIsCutWithAMarkerAndKeptInAVariable() {
        ObjectNode reply = run("print('x' * 10000)");
        String out = reply.path("stdout").asText();
        assertThat(out.length()).isLessThan(2300);
        assertThat(out).contains("characters cut here", "_last_output");
        assertThat(reply.path("truncated").path("stdout").path("total_chars").asInt())
                .isEqualTo(10001);
        assertThat(run("print(len(_last_output))").path("stdout").asText()).isEqualTo("10001\n");
    }

    @Test
    void timeoutInterruptsAndKeepsVariables() {
        run("keep = list(range(10))");
        ObjectNode reply =
                TestReplies.step(session.execute(StepRequest.of("while True:\n    pass", Duration.ofSeconds(1))));
        assertThat(reply.path("status").asText()).as(reply.toString()).isEqualTo("interrupted");
        assertThat(reply.path("message").asText()).contains("interrupted after", "variables are intact");
        assertThat(run("print(sum(keep))").path("stdout").asText()).isEqualTo("45\n");
    }

    @Test
    void codeThatIgnoresTheInterruptIsKilledAndTheSessionGoesOn() {
        run("keep = 1");
        ObjectNode reply = TestReplies.step(session.execute(StepRequest.of("""
                import signal
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                while True:
                    pass
                """, Duration.ofSeconds(1))));
        assertThat(reply.path("status").asText()).isEqualTo("killed");
        assertThat(reply.path("variables_lost").asBoolean()).isTrue();
        assertThat(reply.path("message").asText()).contains("VARIABLES", "LOST", "fresh kernel is ready");
        ObjectNode after = run("print('keep' in globals())");
        assertThat(after.path("stdout").asText()).isEqualTo("False\n");
    }

    @Test
    void kernelDeathIsReportedAndTheSessionStaysUsable() {
        ObjectNode exit = run("import os\nos._exit(7)");
        assertThat(exit.path("status").asText()).isEqualTo("crashed");
        assertThat(exit.path("kernel_exit").asText()).isEqualTo("exit status 7");
        ObjectNode killed = run("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)");
        assertThat(killed.path("status").asText()).isEqualTo("crashed");
        assertThat(killed.path("kernel_exit").asText()).contains("SIGKILL");
        ObjectNode segv = run("import ctypes\nctypes.string_at(0)");
        assertThat(segv.path("kernel_exit").asText()).contains("SIGSEGV");
        assertThat(segv.path("message").asText()).contains("Fatal Python error");
        assertThat(run("1 + 1").path("stdout").asText()).isEqualTo("2\n");
        assertThat(session.kernelRestarts()).isEqualTo(3);
    }

    @Test
    void loadsParseEachDataType() {
        assertThat(TestReplies.load(session.loadData("t", "a\r\nb", DataType.TEXT, CallContext.NONE))
                        .path("length")
                        .asInt())
                .isEqualTo(4);
        ObjectNode lines =
                TestReplies.load(session.loadData("l", "one\r\ntwo\nthree\n", DataType.LINES, CallContext.NONE));
        assertThat(lines.path("type").asText()).isEqualTo("list");
        assertThat(lines.path("length").asInt()).isEqualTo(3);
        assertThat(TestReplies.load(session.loadData("j", "{\"a\": [1, 2]}", DataType.JSON, CallContext.NONE))
                        .path("type")
                        .asText())
                .isEqualTo("dict");
        ObjectNode csv = TestReplies.load(session.loadData("c", "name,n\nx,1\ny,2\n", DataType.CSV, CallContext.NONE));
        assertThat(csv.path("length").asInt()).isEqualTo(2);
        assertThat(csv.path("columns")).extracting(JsonNode::asText).containsExactly("name", "n");
        assertThat(run("print(l[1], j['a'][1], c[1]['name'])").path("stdout").asText())
                .isEqualTo("two 2 y\n");
        assertThatThrownBy(() -> TestReplies.load(session.loadData("bad", "{nope", DataType.JSON, CallContext.NONE)))
                .isInstanceOfSatisfying(RlmException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_DATA);
                    assertThat(e.argument()).isEqualTo("data");
                });
        assertThat(run("print('bad' in globals())").path("stdout").asText()).isEqualTo("False\n");
    }

    @Test
    void largeLoadsAreStreamedInChunksThatKeepCharactersAndLineEndingsWhole() {
        // chunks are 2^19 chars: a surrogate pair straddles the first cut, a \r\n the second
        String data =
                "a".repeat((1 << 19) - 1) + "😀\n" + "b".repeat((1 << 19) - 4) + "\r\n" + "é".repeat(10) + "\r\nlast";
        try (Sessions big = new Sessions(new KernelFactory(
                TestSettings.in(dir, 64L * 1024 * 1024), new ProcessLauncher(), new ObjectMapper()))) {
            Session s = big.resolve(null, "big");
            assertThatThrownBy(() -> TestReplies.load(s.loadData("1bad", data, DataType.TEXT, CallContext.NONE)))
                    .isInstanceOf(RlmException.class);
            assertThat(TestReplies.load(s.loadData("l", data, DataType.LINES, CallContext.NONE))
                            .path("length")
                            .asInt())
                    .isEqualTo(4);
            assertThat(TestReplies.load(s.loadData("t", data, DataType.TEXT, CallContext.NONE))
                            .path("length")
                            .asLong())
                    .isEqualTo(data.codePointCount(0, data.length()));
            String check = "print([len(x) for x in l], l[0][-1] == '😀', l[2], l[3], t.count('\\r'))";
            assertThat(s.execute(StepRequest.of(check, Duration.ofSeconds(30)))
                            .exec()
                            .stdout())
                    .isEqualTo("[524288, 524284, 10, 4] True éééééééééé last 2\n");
        }
    }

    @Test
    void fileLoadsAreReadByTheKernel() throws Exception {
        Path file = Files.writeString(dir.resolve("log.txt"), "ok\nERROR one\nERROR two\n");
        ObjectNode reply = TestReplies.load(session.loadFile("log", file, "log.txt", DataType.LINES, CallContext.NONE));
        assertThat(reply.path("length").asInt()).isEqualTo(3);
        assertThat(reply.path("file_bytes").asLong()).isEqualTo(Files.size(file));
        assertThat(run("sum('ERROR' in l for l in log)").path("stdout").asText())
                .isEqualTo("2\n");
    }

    @Test
    void filesLargerThanTheMemoryLimitAreRefusedBeforeReading() throws Exception {
        Path file = dir.resolve("big.txt");
        Files.write(file, new byte[5 * 1024 * 1024]);
        assertThatThrownBy(() ->
                        TestReplies.load(session.loadFile("big", file, "big.txt", DataType.TEXT, CallContext.NONE)))
                .isInstanceOfSatisfying(
                        RlmException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.TOO_LARGE));
    }

    @Test
    void memoryPolicyDropsLeastRecentlyUsedVariablesAndSaysSo() {
        run("a = 'a' * 1_000_000");
        run("b = 'b' * 1_000_000");
        run("c = 'c' * 1_000_000");
        run("len(a)");
        ObjectNode reply = run("d = 'd' * 1_000_000");
        assertThat(reply.path("evicted"))
                .extracting(v -> v.path("name").asText())
                .containsExactly("b", "c");
        assertThat(reply.path("memory_note").asText()).contains("b, c", "gone");
        assertThat(run("print(sorted(k for k in globals() if len(k) == 1))")
                        .path("stdout")
                        .asText())
                .isEqualTo("['a', 'd']\n");
    }

    @Test
    void variablesCanBeListedDescribedAndCleared() {
        run("numbers = list(range(1000))\nname = 'rlm'");
        ObjectNode vars = TestReplies.answer(session.listVars());
        assertThat(vars.path("variables"))
                .extracting(v -> v.path("name").asText())
                .containsExactly("numbers", "name");
        ObjectNode info = TestReplies.answer(session.varInfo("numbers"));
        assertThat(info.path("type").asText()).isEqualTo("list");
        assertThat(info.path("length").asInt()).isEqualTo(1000);
        assertThat(info.path("size_bytes").asLong()).isGreaterThan(8000);
        assertThat(info.path("created").asText()).endsWith("+00:00");
        assertThatThrownBy(() -> session.varInfo("nope"))
                .isInstanceOfSatisfying(
                        RlmException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.VARIABLE_NOT_FOUND));
        assertThat(TestReplies.answer(session.clear("name")).path("cleared"))
                .extracting(JsonNode::asText)
                .containsExactly("name");
        assertThat(TestReplies.answer(session.clearAll()).path("cleared"))
                .extracting(JsonNode::asText)
                .containsExactly("numbers");
        assertThat(TestReplies.answer(session.memory()).path("variable_count").asInt())
                .isZero();
        assertThat(TestReplies.answer(session.memory()).path("rss_bytes").asLong())
                .isPositive();
    }

    @Test
    void namedSessionsCountStepsStopAtTheLimitAndFinalize() {
        Session named = sessions.create("context", new Limits(2, null, null, null));
        named.loadData("context", "alpha beta", DataType.TEXT, CallContext.NONE);
        assertThat(TestReplies.step(named.execute(StepRequest.of("words = context.split()", Duration.ofSeconds(5))))
                        .path("step")
                        .asInt())
                .isZero();
        ObjectNode second =
                TestReplies.step(named.execute(StepRequest.of("answer = len(words)", Duration.ofSeconds(5))));
        assertThat(second.path("step").asInt()).isEqualTo(1);
        assertThat(second.has("guardrail_stop")).isFalse();
        assertThatThrownBy(() -> TestReplies.step(named.execute(StepRequest.of("x = 1", Duration.ofSeconds(5)))))
                .isInstanceOfSatisfying(
                        RlmException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.GUARDRAIL_STOP));
        assertThat(named.state()).isEqualTo(SessionState.STOPPED);
        assertThat(TestReplies.answer(named.getVar("answer", 0, 100))
                        .path("value")
                        .asText())
                .isEqualTo("2");
        ObjectNode done = TestReplies.finalized(named.finish(null, "answer"));
        assertThat(done.path("final_answer").asText()).isEqualTo("2");
        assertThat(done.path("state").asText()).isEqualTo("finalized");
        assertThatThrownBy(() -> TestReplies.step(named.execute(StepRequest.of("x = 1", Duration.ofSeconds(5)))))
                .isInstanceOfSatisfying(
                        RlmException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.SESSION_FINALIZED));
        ObjectNode trace = TestReplies.trace(named.trace(0, 100));
        assertThat(trace.path("steps"))
                .extracting(s -> s.path("kind").asText())
                .containsExactly("load", "exec", "exec", "finalize");
        assertThat(trace.path("steps").path(0).path("status").asText()).isEqualTo("done");
        assertThat(trace.path("steps").path(0).path("output").asText()).matches("str, \\d.*");
        assertThat(trace.path("steps").path(0).path("variables_changed"))
                .extracting(JsonNode::asText)
                .containsExactly("context");
        assertThat(trace.path("final_answer").asText()).isEqualTo("2");
    }

    @Test
    void theTraceKeepsItsLastTenThousandEntries() {
        for (int i = 0; i < 10_003; i++) {
            run("x = " + i);
        }
        ObjectNode trace = TestReplies.trace(session.trace(0, Integer.MAX_VALUE));
        assertThat(trace.path("trace_length").asInt()).isEqualTo(10_003);
        assertThat(trace.path("trace_dropped").asInt()).isEqualTo(3);
        assertThat(trace.path("steps")).hasSize(10_000);
        assertThat(trace.path("steps").path(0).path("index").asInt()).isEqualTo(3);
        assertThat(TestReplies.trace(session.trace(10_001, 10_002))
                        .path("steps")
                        .path(0)
                        .path("input")
                        .asText())
                .isEqualTo("x = 10001");
    }

    @Test
    void getVarRendersTextJsonAndReprAndPages() {
        run("s = 'x' * 50\nd = {'a': [1, 2]}\nst = {1}");
        ObjectNode page = TestReplies.answer(session.getVar("s", 10, 15));
        assertThat(page.path("value").asText()).hasSize(15);
        assertThat(page.path("total_chars").asInt()).isEqualTo(50);
        assertThat(page.path("next_offset").asInt()).isEqualTo(25);
        assertThat(TestReplies.answer(session.getVar("s", 40, 100))
                        .path("next_offset")
                        .isNull())
                .isTrue();
        assertThat(TestReplies.answer(session.getVar("d", 0, 100)).path("value").asText())
                .isEqualTo("{\"a\": [1, 2]}");
        assertThat(TestReplies.answer(session.getVar("d", 0, 100))
                        .path("format")
                        .asText())
                .isEqualTo("json");
        assertThat(TestReplies.answer(session.getVar("st", 0, 100))
                        .path("format")
                        .asText())
                .isEqualTo("repr");
    }

    @Test
    void idleSessionsExpireAndTheConnectionGetsAFreshDefault() {
        run("kept = 1");
        sessions.sweep(Duration.ZERO);
        assertThat(session.state()).isEqualTo(SessionState.EXPIRED);
        assertThat(session.hasKernel()).isFalse();
        assertThatThrownBy(() -> run("kept"))
                .isInstanceOfSatisfying(
                        RlmException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.SESSION_EXPIRED));
        Session fresh = sessions.resolve(null, "test-connection");
        assertThat(fresh.id()).isNotEqualTo(session.id());
        assertThat(sessions.all()).extracting(Session::id).contains(session.id(), fresh.id());
    }

    @Test
    void unknownSessionIdsAreRefused() {
        assertThatThrownBy(() -> sessions.resolve("s-nope", "c")).isInstanceOfSatisfying(RlmException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.SESSION_NOT_FOUND);
            assertThat(e.argument()).isEqualTo("session_id");
        });
        assertThat(sessions.resolve(session.id(), "another-connection")).isSameAs(session);
    }
}

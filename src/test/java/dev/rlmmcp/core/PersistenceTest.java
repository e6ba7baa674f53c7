package dev.rlmmcp.core;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.store.StateStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Sessions over a real state store: snapshots, spill, restore after a kernel death and after a restart. */
class PersistenceTest {

    private static final Duration T = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private final List<Sessions> opened = new ArrayList<>();
    private final List<StateStore> stores = new ArrayList<>();

    @AfterEach
    void stop() {
        opened.forEach(Sessions::close);
    }

    /**
     * A server's sessions on the state directory; a second call is the server after a restart, once
     * the first one's database writes (gathered for a few milliseconds) are committed.
     */
    private Sessions server(long memoryLimit, Duration debounce) {
        stores.forEach(StateStore::flush);
        StateStore store = StateStore.open(dir.resolve("state"), debounce);
        stores.add(store);
        Sessions sessions = new Sessions(
                new KernelFactory(TestSettings.in(dir, memoryLimit), new ProcessLauncher(), new ObjectMapper()), store);
        opened.add(sessions);
        return sessions;
    }

    private static String out(Session session, String code) {
        ObjectNode reply = TestReplies.step(session.execute(StepRequest.of(code, T)));
        assertThat(reply.path("error").isObject()).as(reply.toString()).isFalse();
        return reply.path("stdout").asText();
    }

    private static Map<String, String> statuses(Session session) {
        return session.listVars().body().variables().stream()
                .collect(Collectors.toMap(Variable::name, Variable::status));
    }

    @Test
    void aRestartedServerHasTheSessionItsTraceLimitsAndEveryVariable() {
        Sessions first = server(1L << 30, Duration.ofHours(1));
        Session session = first.create("work", new Limits(50, null, null, null));
        session.loadData("doc", "alpha beta\ngamma\n", DataType.LINES, CallContext.NONE);
        out(session, """
                import re, collections
                counts = collections.Counter(re.findall(r'\\w', ''.join(doc)))
                blob = bytearray(b'xyz' * 1000)
                def shout(s):
                    return s.upper() + '!'
                class Box:
                    def __init__(self, v):
                        self.v = v
                box = Box([1, 2])
                square = lambda n: n * n
                """);
        out(session, "box.v.append(3)\nblob[0:1] = b'Q'");
        assertThat(session.snapshotNow())
                .as("every change written before its reply: nothing left")
                .isNull();

        Sessions restarted = server(1L << 30, Duration.ofHours(1));
        Session back = restarted.get(session.id());
        assertThat(TestReplies.summary(back.summary()).path("name").asText()).isEqualTo("work");
        assertThat(back.limits().maxSteps()).isEqualTo(50);
        assertThat(TestReplies.summary(back.summary()).path("steps").asInt()).isEqualTo(2);
        assertThat(TestReplies.trace(back.trace(0, 100)).path("steps")).hasSize(3);
        assertThat(statuses(back)).containsEntry("doc", "spilled").containsEntry("shout", "live");
        assertThat(
                        out(
                                back,
                                "print(doc, counts['a'], bytes(blob[:4]), shout('hi'), box.v, type(box).__name__, square(7), re.sub('a', 'b', 'a'))"))
                .isEqualTo("['alpha beta', 'gamma'] 5 b'Qyzx' HI! [1, 2, 3] Box 49 b\n");
        assertThat(statuses(back)).containsEntry("doc", "live");
        assertThat(TestReplies.trace(back.trace(0, 100)).path("steps")).hasSize(4);
    }

    @Test
    void unchangedVariablesAreNotRewritten() throws Exception {
        Session session = server(1L << 30, Duration.ofHours(1)).create("s", Limits.NONE);
        out(session, "a = 'x' * 2_000_000\nb = [1, 2]");
        JsonNode first = manifest(session);
        assertThat(first.path("variables").has("a")).isTrue();
        assertThat(first.path("variables").has("b")).isTrue();
        out(session, "print(len(a), b)");
        assertThat(manifest(session))
                .as("b, which the step may have changed in place, had not changed")
                .isEqualTo(first);
        out(session, "b.append(3)");
        JsonNode third = manifest(session);
        assertThat(third.path("generation").asInt())
                .isEqualTo(first.path("generation").asInt() + 1);
        assertThat(third.path("variables").path("a"))
                .isEqualTo(first.path("variables").path("a"));
        assertThat(third.path("variables").path("b").path("file"))
                .isNotEqualTo(first.path("variables").path("b").path("file"));
    }

    @Test
    void aChangeTooLargeToWriteBeforeTheReplyIsNamedAndWrittenRightAfter() throws Exception {
        Session session = server(1L << 30, Duration.ofHours(1)).create("s", Limits.NONE);
        ObjectNode reply = TestReplies.step(session.execute(StepRequest.of("small = 1\nbig = 'x' * (64 << 20)", T)));
        assertThat(names(reply.path("still_writing"))).containsExactly("big");
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!manifest(session).path("variables").has("big") && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(manifest(session).path("variables").has("big"))
                .as("written in the background")
                .isTrue();
        assertThat(manifest(session).path("pending")).isEmpty();
        assertThat(TestReplies.step(session.execute(StepRequest.of("small = 2", T)))
                        .has("still_writing"))
                .isFalse();
    }

    private JsonNode manifest(Session session) throws Exception {
        return new ObjectMapper()
                .readTree(dir.resolve("state/snapshots/" + session.id() + "/manifest.json")
                        .toFile());
    }

    @Test
    void aKernelKilledMidStepComesBackWithEveryEarlierStepsVariables() {
        Session session = server(1L << 30, Duration.ofHours(1)).create("s", Limits.NONE);
        out(session, "kept = list(range(5))");
        session.snapshotNow();
        out(session, "newer = 'made just before the crash'");
        // the snapshot is due only in an hour, but the next call writes it before it runs
        ObjectNode crash = TestReplies.step(session.execute(
                StepRequest.of("import os, signal\nduring = 1\nos.kill(os.getpid(), signal.SIGKILL)", T)));
        assertThat(crash.path("status").asText()).isEqualTo("crashed");
        assertThat(crash.path("variables_lost").asBoolean()).isFalse();
        assertThat(crash.path("lost_variables")).isEmpty();
        assertThat(crash.path("message").asText()).contains("snapshot").contains("failed call itself");
        assertThat(out(session, "print(kept, newer)")).isEqualTo("[0, 1, 2, 3, 4] made just before the crash\n");
        assertThat(TestReplies.step(session.execute(StepRequest.of("during", T)))
                        .path("error")
                        .path("type")
                        .asText())
                .isEqualTo("NameError");
    }

    @Test
    void aKernelThatDiedBetweenCallsIsReplacedAndTheNextCallRunsNamingWhatWasLost() throws Exception {
        Session session = server(1L << 30, Duration.ofHours(1)).create("s", Limits.NONE);
        out(session, "kept = list(range(5))");
        // a generator cannot be snapshotted: only the kernel holds it
        long pid = Long.parseLong(out(session, "late = (i for i in range(3))\nprint(__import__('os').getpid())")
                .strip());
        ProcessHandle kernel = ProcessHandle.of(pid).orElseThrow();
        kernel.destroyForcibly();
        kernel.onExit().get(10, TimeUnit.SECONDS);

        ObjectNode next = TestReplies.step(session.execute(StepRequest.of("print(kept)", T)));
        assertThat(next.path("status").asText()).isEqualTo("ok");
        assertThat(next.path("stdout").asText()).isEqualTo("[0, 1, 2, 3, 4]\n");
        assertThat(names(next.path("lost_variables"))).containsExactly("late");
        assertThat(next.path("kernel_restarted").path("message").asText())
                .contains("died since the last call")
                .contains("late")
                .contains("This call ran on the fresh kernel");
        assertThat(session.kernelRestarts()).isEqualTo(1);
        assertThat(TestReplies.step(session.execute(StepRequest.of("print(kept)", T)))
                        .has("kernel_restarted"))
                .isFalse();
    }

    @Test
    void snapshotsFollowStepsByThemselvesAfterTheDebounce() throws Exception {
        Session session = server(1L << 30, Duration.ofMillis(50)).create("s", Limits.NONE);
        out(session, "v = {'k': 1}");
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (session.summary().snapshotAt() == null && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(session.summary().snapshotAt()).isNotNull();
        assertThat(Files.readString(dir.resolve("state/snapshots/" + session.id() + "/manifest.json")))
                .contains("\"v\"");
    }

    @Test
    void underASmallMemoryLimitVariablesSpillAndComeBackWhenCodeUsesThem() {
        Session session = server(8L * 1024 * 1024, Duration.ofHours(1)).create("s", Limits.NONE);
        out(session, "a = 'a' * 3_000_000");
        out(session, "b = 'b' * 3_000_000");
        ObjectNode third = TestReplies.step(session.execute(StepRequest.of("c = 'c' * 3_000_000", T)));
        assertThat(third.path("evicted").get(0).path("spilled").asBoolean()).isTrue();
        assertThat(third.path("memory_note").asText()).contains("Spilled to disk: a");
        assertThat(statuses(session)).containsEntry("a", "spilled").containsEntry("c", "live");
        assertThat(out(session, "print(len(a), a[:3], set(a))")).isEqualTo("3000000 aaa {'a'}\n");
        assertThat(statuses(session)).containsEntry("a", "live");
        assertThat(TestReplies.answer(session.varInfo("b")).path("status").asText())
                .isIn("live", "spilled");
        assertThat(TestReplies.answer(session.getVar("b", 0, 5)).path("value").asText())
                .isEqualTo("bbbbb");
    }

    @Test
    void valuesThatCannotBeSnapshottedAreReportedWithTheReason() {
        Sessions first = server(1L << 30, Duration.ofHours(1));
        Session session = first.create("s", Limits.NONE);
        ObjectNode reply = TestReplies.step(session.execute(StepRequest.of(
                "gen = (i for i in range(3))\nok = 1\n"
                        + "def make():\n    def inner():\n        return 1\n    return inner\nclosure = make()",
                T)));
        assertThat(reply.path("not_persisted").path("gen").asText())
                .contains("cannot be pickled")
                .contains("generator");
        assertThat(reply.path("not_persisted").path("closure").asText()).contains("inside a function");
        assertThat(reply.path("not_persisted").has("ok")).isFalse();
        assertThat(TestReplies.answer(session.varInfo("gen"))
                        .path("not_persisted")
                        .asText())
                .contains("generator");
        session.snapshotNow();

        Session back = server(1L << 30, Duration.ofHours(1)).get(session.id());
        assertThat(statuses(back)).containsEntry("ok", "spilled").containsEntry("gen", "lost");
        assertThat(TestReplies.answer(back.varInfo("gen")).path("not_persisted").asText())
                .contains("generator");
    }

    @Test
    void aSessionWhoseRecordTheServerDidNotWriteBeforeItDiedIsResumedWithItsVariables() {
        Sessions first = server(1L << 30, Duration.ofHours(1));
        Session session = first.resolve(null, "connection");
        out(session, "x = 41");
        // killed after the reply, before the writer committed the new session's record
        stores.getLast().flush();
        stores.getLast().database().delete(session.id());
        Session back = server(1L << 30, Duration.ofHours(1)).get(session.id());
        assertThat(out(back, "print(x + 1)")).isEqualTo("42\n");
        assertThat(back.limits()).isEqualTo(Limits.NONE);
    }

    @Test
    void aDeletedSessionLeavesNothingBehind() {
        Sessions sessions = server(1L << 30, Duration.ofHours(1));
        Session session = sessions.create("s", Limits.NONE);
        out(session, "x = 1");
        session.snapshotNow();
        assertThat(dir.resolve("state/snapshots/" + session.id())).exists();
        sessions.delete(session.id());
        assertThat(dir.resolve("state/snapshots/" + session.id())).doesNotExist();
        assertThat(server(1L << 30, Duration.ofHours(1)).all()).isEmpty();
    }

    private static List<String> names(JsonNode array) {
        List<String> names = new ArrayList<>();
        array.forEach(n -> names.add(n.asText()));
        return names;
    }
}

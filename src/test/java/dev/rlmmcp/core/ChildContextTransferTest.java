package dev.rlmmcp.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.data.Download;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.kernel.channel.Kernel;
import dev.rlmmcp.kernel.channel.KernelReply;
import dev.rlmmcp.kernel.process.BwrapLauncher;
import dev.rlmmcp.kernel.process.KernelLauncher;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.kernel.protocol.ExecResult;
import dev.rlmmcp.kernel.protocol.KernelRequest;
import dev.rlmmcp.kernel.protocol.LoopAnswer;
import dev.rlmmcp.kernel.protocol.RlmBegun;
import dev.rlmmcp.store.SnapshotPrune;
import dev.rlmmcp.store.StateStore;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * rlm_query's side of the kernel protocol with real kernels: a context moves to the host as a pickle
 * file in the parent's snapshot directory (read by the host where the kernel wrote it, gone when the
 * callback returns) and into a child's kernel as a "pickle" load; the loop's answer and rlm_begin.
 */
class ChildContextTransferTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration T = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private Sessions sessions;
    private StateStore store;

    @AfterEach
    void stop() {
        if (sessions != null) {
            sessions.close();
        }
    }

    /** Sessions with a state directory, their kernels run as the server runs them ("bwrap") or plainly. */
    private void open(String sandbox) {
        KernelLauncher launcher = "bwrap".equals(sandbox)
                ? BwrapLauncher.detect(dir.resolve("spool"), Settings.DEFAULT_DISK_BYTES, SnapshotPrune::prune)
                        .orElse(null)
                : new ProcessLauncher();
        assumeTrue(launcher != null, "bubblewrap is not usable here");
        store = StateStore.open(dir.resolve("state"), Duration.ofHours(1));
        sessions = new Sessions(new KernelFactory(TestSettings.in(dir), launcher, JSON), store);
    }

    private Path snapshotDir(Session session) {
        return store.snapshots().root().resolve(session.id());
    }

    private static ObjectNode run(Session session, String code, HostCallbacks callbacks) {
        ObjectNode reply = TestReplies.step(
                session.execute(new StepRequest(code, T, StepExtras.of(null, callbacks, null), CallContext.NONE)));
        assertThat(reply.path("status").asText()).as(reply.toString()).isEqualTo("ok");
        return reply;
    }

    private static JsonNode answers(String... texts) {
        ObjectNode result = JSON.createObjectNode();
        for (String text : texts) {
            result.withArray("answers").addObject().put("text", text);
        }
        return result;
    }

    @ParameterizedTest
    @ValueSource(strings = {"bwrap", "process"})
    void aLargeContextReachesTheHostAsAFileInTheSnapshotDirectoryThatIsGoneAfterwards(String sandbox)
            throws IOException {
        open(sandbox);
        Session parent = sessions.create("parent", Limits.NONE);
        AtomicReference<JsonNode> seen = new AtomicReference<>();
        AtomicReference<Path> file = new AtomicReference<>();
        HostCallbacks rlm = HostCallbacks.byKind(Map.of("rlm", (kind, request) -> {
            seen.set(request);
            JsonNode ctx = request.path("contexts").path(0);
            Path path = snapshotDir(parent).resolve(ctx.path("file").asText());
            file.set(path);
            try (InputStream in = Files.newInputStream(path)) {
                byte[] head = in.readNBytes(2);
                // protocol 5: PROTO 5
                String proto = head.length == 2 && head[0] == (byte) 0x80 ? "pickle " + head[1] : "not a pickle";
                return answers(proto + ", " + Files.size(path) + " bytes");
            } catch (IOException e) {
                throw new CallbackRefused("NO_FILE", e.toString());
            }
        }));

        ObjectNode reply = run(parent, "big = 'x' * 50_000_000\nprint(rlm_query('how long?', big, model='m'))", rlm);

        JsonNode ctx = seen.get().path("contexts").path(0);
        long bytes = ctx.path("bytes").asLong();
        assertThat(bytes).isGreaterThan(50_000_000L).isLessThan(50_000_100L);
        assertThat(reply.path("stdout").asText()).isEqualTo("pickle 5, " + bytes + " bytes\n");
        assertThat(ctx.path("file").asText()).matches("\\.transfer/[0-9a-f]{32}\\.pkl");
        assertThat(ctx.has("inline")).isFalse();
        assertThat(ctx.path("type").asText()).isEqualTo("str");
        assertThat(ctx.path("length").asLong()).isEqualTo(50_000_000L);
        assertThat(ctx.path("preview").asText()).isEqualTo("x".repeat(300));
        assertThat(seen.get().path("prompts").path(0).asText()).isEqualTo("how long?");
        assertThat(seen.get().path("model").asText()).isEqualTo("m");
        assertThat(seen.get().path("batched").asBoolean()).isFalse();
        assertThat(file.get()).doesNotExist();
        parent.snapshotNow();
        try (var entries = Files.list(snapshotDir(parent))) {
            // the snapshot holds big, and nothing of the transfer but its empty directory
            assertThat(entries.map(p -> p.getFileName().toString()).sorted())
                    .containsExactly(".transfer", "big.2", "manifest.json");
        }
        try (var entries = Files.list(file.get().getParent())) {
            assertThat(entries).isEmpty();
        }
        assertThat(run(parent, "print(len(big))", HostCallbacks.NONE)
                        .path("stdout")
                        .asText())
                .isEqualTo("50000000\n");
    }

    @ParameterizedTest
    @ValueSource(strings = {"bwrap", "process"})
    void aChildsKernelLoadsTheContextFromThePickleAsAVariable(String sandbox) {
        open(sandbox);
        Session parent = sessions.create("parent", Limits.NONE);
        Session child = sessions.create("child", Limits.NONE);
        HostCallbacks rlm = HostCallbacks.byKind(Map.of("rlm", (kind, request) -> {
            JsonNode ctx = request.path("contexts").path(0);
            Path path = snapshotDir(parent).resolve(ctx.path("file").asText());
            try {
                // streamed from the parent's file into the child's kernel, as the engine moves a context
                child.loadStream(
                        "context",
                        DataType.PICKLE,
                        new Download(Files.newInputStream(path), Files.size(path), "context", null),
                        "context",
                        "the context",
                        CallContext.NONE);
            } catch (IOException e) {
                throw new CallbackRefused("NO_FILE", e.toString());
            }
            return answers(run(
                            child,
                            "print(type(context).__name__, context['rows'][-1], context['name'])",
                            HostCallbacks.NONE)
                    .path("stdout")
                    .asText()
                    .strip());
        }));

        ObjectNode reply = run(parent, """
                ctx = {"rows": list(range(100_000)), "name": "héllo", "blob": bytes(1000)}
                print(rlm_query("what is in it?", ctx))
                """, rlm);

        assertThat(reply.path("stdout").asText()).isEqualTo("dict 99999 héllo\n");
        assertThat(run(child, "print(len(context['blob']), sorted(context))", HostCallbacks.NONE)
                        .path("stdout")
                        .asText())
                .isEqualTo("1000 ['blob', 'name', 'rows']\n");
    }

    @Test
    void batchedChildrenThatFailGiveErrorStringsInTheirPlaces() {
        open("process");
        Session parent = sessions.create("parent", Limits.NONE);
        HostCallbacks rlm = HostCallbacks.byKind(Map.of("rlm", (kind, request) -> {
            ObjectNode result = JSON.createObjectNode();
            result.withArray("answers").addObject().put("text", "first");
            result.withArray("answers")
                    .addObject()
                    .putObject("error")
                    .put("code", "CHILD_FAILED")
                    .put("message", "its kernel died");
            return result;
        }));
        ObjectNode reply = run(parent, "print(rlm_query_batched(['a', 'b'], ['x', None], concurrency=2))", rlm);
        assertThat(reply.path("stdout").asText())
                .isEqualTo("['first', '[rlm_query failed: CHILD_FAILED: its kernel died]']\n");
        ObjectNode refused = TestReplies.step(parent.execute(StepRequest.of("rlm_query('q')", T)));
        assertThat(refused.path("error").path("type").asText()).isEqualTo("RLMQueryError");
        assertThat(refused.path("error").path("message").asText()).contains("no host callbacks of kind 'rlm'");
    }

    @Test
    void rlmBeginAndTheAnswerAnExecReports() throws Exception {
        assertThat(JSON.valueToTree(new KernelRequest.Exec("x = 1", null)).has("answer"))
                .isFalse();
        assertThat(JSON.valueToTree(KernelRequest.Exec.reportingAnswer("x = 1"))
                        .path("answer")
                        .asBoolean())
                .isTrue();
        Duration grace = Duration.ofSeconds(2);
        try (KernelFactory kernels = new KernelFactory(TestSettings.in(dir), new ProcessLauncher(), JSON);
                Kernel kernel = kernels.start("loop")) {
            KernelReply<RlmBegun> begun = kernel.call(new KernelRequest.RlmBegin(), T, grace);
            assertThat(begun.ok()).isTrue();
            assertThat(begun.body()).isEqualTo(new RlmBegun());

            KernelReply<ExecResult> draft =
                    kernel.call(KernelRequest.Exec.reportingAnswer("answer['content'] = 'half'"), T, grace);
            assertThat(draft.body().answer()).isEqualTo(new LoopAnswer("half", false));
            KernelReply<ExecResult> done = kernel.call(KernelRequest.Exec.reportingAnswer("FINAL(6 * 7)"), T, grace);
            assertThat(done.body().answer()).isEqualTo(new LoopAnswer("42", true));
            assertThat(kernel.call(new KernelRequest.Exec("FINAL(1)", null), T, grace)
                            .body()
                            .answer())
                    .isNull();

            kernel.call(new KernelRequest.Exec("answer = 5", null), T, grace);
            KernelReply<RlmBegun> taken = kernel.call(new KernelRequest.RlmBegin(), T, grace);
            assertThat(taken.ok()).isFalse();
            assertThat(taken.refusal().code()).isEqualTo("NAME_TAKEN");
            assertThat(taken.refusal().argument()).isEqualTo("answer");
            assertThat(taken.refusal().message()).contains("rename it");
            assertThat(kernel.call(KernelRequest.Exec.reportingAnswer("pass"), T, grace)
                            .body()
                            .answer())
                    .isNull();
        }
    }
}

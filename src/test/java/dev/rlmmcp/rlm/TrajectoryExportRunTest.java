package dev.rlmmcp.rlm;

import static dev.rlmmcp.rlm.ScriptedBackend.repl;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.core.DataType;
import dev.rlmmcp.core.Limits;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.TestSettings;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.llm.LlmLimits;
import dev.rlmmcp.llm.LlmService;
import dev.rlmmcp.store.StateStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The export of a run the engine really made (real kernels, a scripted model): a depth-2 tree, read
 * from the session's trace as the engine recorded it, conforms to alexzhang13/rlm's logger format at
 * every level and keeps the nesting.
 */
class TrajectoryExportRunTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void aDepthTwoRunOfTheEngineExportsLevelByLevel() throws Exception {
        ScriptedBackend model = new ScriptedBackend(t -> {
            if (!t.rlm()) {
                return "plain";
            }
            if (t.question().startsWith("count")) {
                return t.index() == 1
                        ? repl("""
                        half = len(context) // 2
                        parts = rlm_query_batched(["tally"] * 2, [context[:half], context[half:]])
                        print(parts)
                        """)
                        : repl("answer['content'] = str(sum(int(p) for p in parts))\nanswer['ready'] = True");
            }
            if (t.question().startsWith("tally")) {
                return t.index() == 1 ? repl("""
                        sub = rlm_query("leaf", context)
                        print(sub)
                        """) : repl("answer['content'] = sub\nanswer['ready'] = True");
            }
            return repl("answer['content'] = str(context.count('x'))\nanswer['ready'] = True");
        });
        LlmService llm = new LlmService(
                LlmService.Mode.OPENAI,
                model,
                new LlmLimits(1000, 100_000, 16, 1_000_000, null, Duration.ofSeconds(30), 3),
                JSON);
        KernelFactory kernels = new KernelFactory(TestSettings.in(dir), new ProcessLauncher(), JSON);
        try (Sessions sessions =
                new Sessions(kernels, llm, StateStore.open(dir.resolve("state"), Duration.ofHours(1)))) {
            RunLimits d = RunLimits.DEFAULTS;
            RlmRuns runs = new RlmRuns(
                    sessions,
                    new RlmConfig(
                            new RunLimits(
                                    3,
                                    d.maxIterations(),
                                    d.maxChildren(),
                                    d.maxTime(),
                                    null,
                                    null,
                                    null,
                                    d.maxConsecutiveErrors(),
                                    d.outputCap(),
                                    d.compactAt(),
                                    d.concurrency()),
                            Map.of(),
                            Map.of(),
                            128_000));
            Session session = sessions.create("root", Limits.NONE);
            session.loadData("context", "x.x.xx..x.x", DataType.TEXT, CallContext.NONE);

            RunOutcome outcome = runs.solve(
                    session, "count the x", new RunOptions(null, null), null, RunProgress.NONE, CallContext.NONE);

            assertThat(outcome.answer()).isEqualTo("6");
            JsonNode steps = JSON.valueToTree(session.trace(0, 1000)).path("steps");
            JsonNode entry = steps.get(steps.size() - 1);
            assertThat(entry.path("kind").asText()).isEqualTo("rlm");
            String jsonl = TrajectoryJsonl.text(entry);
            // Kept for a look in alexzhang13/rlm's visualizer.
            java.nio.file.Files.writeString(Path.of("target", "rlm-depth2-run.jsonl"), jsonl);
            List<JsonNode> lines = TrajectoryJsonlTest.parse(jsonl);
            List<String> checked = TrajectoryJsonlTest.conformsToTheLogger(lines);
            assertThat(lines).hasSize(3);
            assertThat(lines.get(0).path("max_depth").asInt()).isEqualTo(3);
            assertThat(lines.get(1).path("prompt").get(1).path("content").asText())
                    .startsWith("Question: count the x");
            JsonNode children =
                    lines.get(1).path("code_blocks").get(0).path("result").path("rlm_calls");
            assertThat(children).hasSize(2);
            JsonNode grandchild = children.get(0)
                    .path("metadata")
                    .path("iterations")
                    .get(0)
                    .path("code_blocks")
                    .get(0)
                    .path("result")
                    .path("rlm_calls")
                    .get(0);
            assertThat(grandchild.path("prompt").asText()).isEqualTo("leaf");
            assertThat(grandchild
                            .path("metadata")
                            .path("iterations")
                            .get(0)
                            .path("final_answer")
                            .asText())
                    .isIn("3", "2", "4", "1", "5");
            assertThat(lines.get(2).path("final_answer").asText()).isEqualTo("6");
            assertThat(checked)
                    .anyMatch(c -> c.endsWith(".metadata.iterations[0].code_blocks[0].result.rlm_calls[0]"
                            + ".metadata.iterations[0].code_blocks[0].result"));
        }
    }
}

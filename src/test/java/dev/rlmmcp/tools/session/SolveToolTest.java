package dev.rlmmcp.tools.session;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.bridge.BridgedServers;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.TestSettings;
import dev.rlmmcp.data.DataRoot;
import dev.rlmmcp.data.DataSources;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.rlm.RlmConfig;
import dev.rlmmcp.rlm.RlmRuns;
import dev.rlmmcp.rlm.RunFigures;
import dev.rlmmcp.rlm.RunLimits;
import dev.rlmmcp.rlm.RunOutcome;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.TextRenderer;
import dev.rlmmcp.tools.ToolCatalog;
import dev.rlmmcp.tools.standard.StandardTools;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** rlm_solve's arguments, refusals, schema and text reply; the runs themselves are tested end to end. */
class SolveToolTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** A client's sampling that no refused call reaches. */
    private static final dev.rlmmcp.llm.LlmBackend NO_MODEL = new dev.rlmmcp.llm.LlmBackend() {
        @Override
        public String name() {
            return "sampling";
        }

        @Override
        public dev.rlmmcp.llm.LlmAnswer complete(dev.rlmmcp.llm.LlmRequest request, Duration timeout) {
            throw new AssertionError("a refused call reached the model");
        }
    };

    @TempDir
    Path dir;

    private Sessions sessions;
    private ToolCatalog catalog;

    @BeforeEach
    void start() {
        sessions = new Sessions(new KernelFactory(TestSettings.in(dir), new ProcessLauncher(), JSON));
        RlmConfig config = new RlmConfig(
                new RunLimits(3, 7, 11, Duration.ofSeconds(60), null, null, 0.5, 4, 20_000, 0.85, 8),
                Map.of(),
                Map.of(),
                128_000);
        catalog = StandardTools.catalog(
                sessions,
                new DataRoot(dir),
                BridgedServers.NONE,
                DataSources.defaults(),
                new RlmRuns(sessions, config));
    }

    @AfterEach
    void stop() {
        sessions.close();
    }

    private JsonNode refusal(Map<String, Object> arguments) throws Exception {
        return refusal(arguments, new Caller("c", NO_MODEL));
    }

    private JsonNode refusal(Map<String, Object> arguments, Caller caller) throws Exception {
        McpSchema.CallToolResult result =
                catalog.call(catalog.tool("rlm_solve").orElseThrow(), withJson(arguments), caller);
        assertThat(result.isError()).as(arguments.toString()).isTrue();
        return JSON.readTree(((McpSchema.TextContent) result.content().getFirst()).text())
                .path("error");
    }

    private static Map<String, Object> withJson(Map<String, Object> arguments) {
        Map<String, Object> all = new java.util.LinkedHashMap<>(arguments);
        all.put("response_format", "json");
        return all;
    }

    @Test
    void theSchemaNamesEveryLimitWithTheServersDefaults() {
        McpSchema.Tool tool = catalog.definitions().stream()
                .filter(t -> t.name().equals("rlm_solve"))
                .findFirst()
                .orElseThrow();
        Map<String, Object> properties =
                (Map<String, Object>) tool.inputSchema().get("properties");
        assertThat(properties)
                .containsKeys(
                        "question",
                        "context",
                        "session_id",
                        "model",
                        "max_depth",
                        "max_iterations",
                        "max_children",
                        "max_time_s",
                        "max_input_tokens",
                        "max_output_tokens",
                        "max_cost_usd",
                        "max_consecutive_errors",
                        "response_format");
        assertThat(tool.inputSchema().get("required")).isEqualTo(List.of("question"));
        assertThat(properties.get("max_depth").toString()).contains("default 3");
        assertThat(properties.get("max_iterations").toString()).contains("default 7");
        assertThat(((Map<?, ?>) properties.get("max_cost_usd")).get("type")).isEqualTo("number");
        assertThat(tool.description()).contains("default depth 3, 7 iterations per RLM, 60 s");
        assertThat(catalog.mayRunLong()).contains("rlm_solve");
    }

    @Test
    void badArgumentsAreRefusedNamingTheArgumentAndTheFixAndLeaveNoSession() throws Exception {
        int before = sessions.all().size();
        JsonNode both = refusal(Map.of("question", "q", "session_id", "s1", "context", Map.of("text", "x")));
        assertThat(both.path("argument").asText()).isEqualTo("context");
        assertThat(both.path("message").asText()).isEqualTo("rlm_solve got both session_id and context");
        JsonNode two = refusal(Map.of("question", "q", "context", Map.of("text", "x", "url", "https://e.com")));
        assertThat(two.path("message").asText()).isEqualTo("context names 2 sources (text, url)");
        assertThat(two.path("fix").asText()).startsWith("give exactly one of {\"text\": \"...\"}");
        assertThat(refusal(Map.of("question", "q", "context", Map.of()))
                        .path("message")
                        .asText())
                .isEqualTo("context names no source");
        assertThat(refusal(Map.of("question", "q", "context", "just text"))
                        .path("message")
                        .asText())
                .isEqualTo("context must be an object, not a string");
        assertThat(refusal(Map.of("question", "q", "context", Map.of("path", "x")))
                        .path("message")
                        .asText())
                .isEqualTo("context has no field path");
        assertThat(refusal(Map.of("question", "q", "context", Map.of("s3", "k")))
                        .path("message")
                        .asText())
                .startsWith("context.s3 must be an object with the string key");
        assertThat(refusal(Map.of("question", "q", "context", Map.of("text", "x", "data_type", "xml")))
                        .path("message")
                        .asText())
                .isEqualTo("context.data_type is xml, not a known data type");
        JsonNode outside = refusal(Map.of("question", "q", "context", Map.of("file", "../../etc/passwd")));
        assertThat(outside.path("code").asText()).isEqualTo("PATH_OUTSIDE_DATA_ROOT");
        assertThat(outside.path("argument").asText()).isEqualTo("context");
        JsonNode cost = refusal(Map.of("question", "q", "max_cost_usd", "1 dollar"));
        assertThat(cost.path("argument").asText()).isEqualTo("max_cost_usd");
        assertThat(cost.path("fix").asText()).startsWith("pass max_cost_usd as a number");
        assertThat(refusal(Map.of("question", "q", "max_depth", 0))
                        .path("message")
                        .asText())
                .isEqualTo("max_depth is 0, outside 1..16");
        assertThat(refusal(Map.of("question", " ")).path("message").asText()).isEqualTo("question is empty");
        assertThat(refusal(Map.of("context", Map.of("text", "x")))
                        .path("message")
                        .asText())
                .isEqualTo("rlm_solve needs the argument question");
        assertThat(refusal(Map.of("question", "q", "session_id", "nope"))
                        .path("code")
                        .asText())
                .isEqualTo("SESSION_NOT_FOUND");
        assertThat(sessions.all()).hasSize(before);
    }

    @Test
    void withoutAModelTheRunIsRefusedBeforeAnyDataIsLoaded() throws Exception {
        int before = sessions.all().size();
        JsonNode refused = refusal(Map.of("question", "q", "context", Map.of("text", "x")), new Caller("c"));
        assertThat(refused.path("code").asText()).isEqualTo("NOT_CONFIGURED");
        assertThat(refused.path("message").asText()).startsWith("rlm_solve needs a model: ");
        assertThat(refused.path("fix").asText()).contains("RLM_LLM_BASE_URL", "MCP sampling");
        assertThat(sessions.all()).hasSize(before);
    }

    @Test
    void theCallsLimitsOverrideTheServersDefaults() {
        RunLimits d = new RunLimits(3, 7, 11, Duration.ofSeconds(60), null, null, 0.5, 4, 20_000, 0.85, 8);
        RunLimits limits = SolveTool.limits(
                new Args(
                        "rlm_solve",
                        Map.of(
                                "max_depth",
                                1,
                                "max_iterations",
                                5,
                                "max_children",
                                0,
                                "max_time_s",
                                9,
                                "max_input_tokens",
                                1000,
                                "max_output_tokens",
                                100,
                                "max_cost_usd",
                                0.02,
                                "max_consecutive_errors",
                                1),
                        List.of(
                                "max_depth",
                                "max_iterations",
                                "max_children",
                                "max_time_s",
                                "max_input_tokens",
                                "max_output_tokens",
                                "max_cost_usd",
                                "max_consecutive_errors")),
                d);
        assertThat(limits)
                .isEqualTo(new RunLimits(1, 5, 0, Duration.ofSeconds(9), 1000L, 100L, 0.02, 1, 20_000, 0.85, 8));
        assertThat(SolveTool.limits(new Args("rlm_solve", Map.of(), List.of()), d))
                .isEqualTo(d);
    }

    @Test
    void theTextReplyIsTheAnswerThenTheStopTheFiguresAndTheTrajectory() {
        RunFigures figures = new RunFigures(12, 3, 0, 2, 15_234, 1_200, 0.0123, 2, 4, 8_400);
        ObjectNode reply = RunReport.reply(
                "s-1",
                new RunOutcome(
                        "r1",
                        "42 requests failed",
                        false,
                        "max_iterations",
                        "the root RLM reached max_iterations (7); pass a larger max_iterations",
                        figures),
                5);
        assertThat(TextRenderer.render("rlm_solve", reply, TextRenderer.View.FIRST))
                .isEqualTo("""
                42 requests failed
                [stopped by max_iterations: the root RLM reached max_iterations (7); pass a larger max_iterations]
                [12 iterations; 3 children; depth 2; 15,234+1,200 tokens; $0.0123; 2 cache hits; 8.4 s; session s-1; \
                trajectory: rlm_get_trace(session_id="s-1", start=5, end=6)]""");
        ObjectNode none = RunReport.reply(
                "s-2",
                new RunOutcome("r2", null, false, null, null, new RunFigures(1, 0, 0, 0, 10, 5, null, 0, 0, 100)),
                null);
        assertThat(none.has("answer")).isTrue();
        assertThat(TextRenderer.render("rlm_solve", none, TextRenderer.View.FIRST))
                .isEqualTo("(no answer)\n[1 iterations; 0 children; depth 0; 10+5 tokens; 0.1 s; session s-2]");
        assertThat(RunReport.status(figures, 4, 1))
                .isEqualTo("iteration 4, depth 1, 0 children running, 16,434 tokens, $0.0123");
        assertThat(RunReport.status(new RunFigures(3, 2, 1, 1, 10, 5, null, 0, 0, 100), 0, 1))
                .isEqualTo("depth 1, 1 child running, 15 tokens");
        assertThat(RunReport.figures(figures))
                .isEqualTo("12 iterations, 3 children, depth 2 reached, 15,234 input + "
                        + "1,200 output tokens, $0.0123, 2 cache hits, 4 llm_query calls, 8.4 s");
    }
}

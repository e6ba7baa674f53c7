package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.NodeTool;
import dev.rlmmcp.e2e.support.RunningServer;
import dev.rlmmcp.e2e.support.ServerProcess;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The MCP Inspector CLI ({@code @modelcontextprotocol/inspector}, pinned in e2e/package.json) lists
 * and calls tools over stdio, Streamable HTTP and legacy SSE; the HTTP server runs with an API key,
 * which the Inspector sends as a bearer header.
 */
class InspectorIT {

    private static final String KEY = "inspector-key-5f0c";

    @TempDir
    static Path home;

    @RegisterExtension
    static final RunningServer server = RunningServer.http(Map.of("RLM_API_KEY", KEY));

    private static List<String> http(String url, String... args) {
        List<String> all = new ArrayList<>(List.of(url, "--header", "Authorization: Bearer " + KEY));
        all.addAll(List.of(args));
        all.addAll(List.of("--format", "json", "-q"));
        return all;
    }

    private static List<String> stdio(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--format", "json", "-q", "--"));
        all.addAll(ServerProcess.command(List.of("stdio")));
        return all;
    }

    private static JsonNode run(List<String> args) throws Exception {
        NodeTool.Result run = NodeTool.inspector(home, args);
        assertThat(run.exit()).as(run.both()).isZero();
        return McpDriver.MAPPER.readTree(run.stdout());
    }

    private static void listsAndCalls(List<String> list, List<String> call) throws Exception {
        JsonNode tools = run(list).path("result").path("tools");
        assertThat(tools.findValuesAsText("name")).contains("rlm_execute", "rlm_load_data", "rlm_init_context");
        JsonNode result = run(call).path("result");
        assertThat(result.path("isError").asBoolean()).isFalse();
        assertThat(result.path("content").path(0).path("text").asText()).startsWith("42\n");
        assertThat(result.has("structuredContent"))
                .as("text replies carry no structuredContent")
                .isFalse();
    }

    @Test
    void overStdio() throws Exception {
        listsAndCalls(
                stdio("--method", "tools/list"),
                stdio("--method", "tools/call", "--tool-name", "rlm_execute", "--tool-arg", "code=print(6 * 7)"));
    }

    @Test
    void overStreamableHttp() throws Exception {
        listsAndCalls(
                http(server.mcpUrl(), "--method", "tools/list"),
                http(
                        server.mcpUrl(),
                        "--method",
                        "tools/call",
                        "--tool-name",
                        "rlm_execute",
                        "--tool-arg",
                        "code=print(6 * 7)"));
    }

    @Test
    void overLegacySse() throws Exception {
        String sse = server.baseUrl() + "/sse";
        listsAndCalls(
                http(sse, "--method", "tools/list"),
                http(sse, "--method", "tools/call", "--tool-name", "rlm_execute", "--tool-arg", "code=print(6 * 7)"));
    }

    @Test
    void withoutTheKeyTheInspectorIsTurnedAway() {
        NodeTool.Result run =
                NodeTool.inspector(home, List.of(server.mcpUrl(), "--method", "tools/list", "--format", "json", "-q"));
        assertThat(run.exit()).as(run.both()).isNotZero();
    }
}

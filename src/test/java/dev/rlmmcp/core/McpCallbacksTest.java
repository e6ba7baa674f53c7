package dev.rlmmcp.core;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.bridge.BridgedServers;
import dev.rlmmcp.bridge.BridgedTool;
import dev.rlmmcp.bridge.ServerDefinition;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.tools.Replies;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kernel side of code-execution mode (proxies, mcp.runtime, top-level await) against a real
 * CPython kernel, with the host's checks in McpCallbacks; the servers behind them are two small
 * in-process ones (the SDK clients are tested end to end in RunPythonIT).
 */
class McpCallbacksTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private Sessions sessions;
    private Session session;
    private final List<String> calls = new CopyOnWriteArrayList<>();

    /** "calc" adds, "Other Server" is configured but not given to the runs below. */
    private final BridgedServers servers = new BridgedServers() {
        @Override
        public List<ServerDefinition> discovered() {
            return List.of(
                    ServerDefinition.stdio("calc", "calc-server", List.of(), Map.of("KEY", "sk-never-shown"), "t"),
                    ServerDefinition.stdio("Other Server", "other", List.of(), Map.of(), "t"));
        }

        @Override
        public List<BridgedTool> listTools(String server) {
            return List.of(
                    new BridgedTool(
                            "add-two", "Adds a and b.", JSON.createObjectNode().put("type", "object")),
                    new BridgedTool("fail", "Always fails.", JSON.createObjectNode()));
        }

        @Override
        public ObjectNode callTool(String server, String tool, JsonNode arguments, Duration timeout) {
            calls.add(server + "." + tool + " " + arguments);
            ObjectNode result = JSON.createObjectNode();
            boolean fail = tool.equals("fail");
            result.putArray("content")
                    .addObject()
                    .put("type", "text")
                    .put(
                            "text",
                            fail
                                    ? "it failed"
                                    : String.valueOf(arguments.path("a").asInt()
                                            + arguments.path("b").asInt()));
            result.put("isError", fail);
            return result;
        }

        @Override
        public void close() {}
    };

    @BeforeEach
    void start() {
        sessions = new Sessions(new KernelFactory(TestSettings.in(dir), new ProcessLauncher(), JSON));
        session = sessions.resolve(null, "test-connection");
    }

    @AfterEach
    void stop() {
        sessions.close();
    }

    private ObjectNode run(String code, List<String> allowed) {
        McpCallbacks callbacks = new McpCallbacks(servers, allowed, Duration.ofSeconds(5), JSON);
        return TestReplies.step(session.execute(new StepRequest(
                code,
                Duration.ofSeconds(20),
                StepExtras.of(null, callbacks.byKind(), callbacks.kernelSetup()),
                CallContext.NONE)));
    }

    @Test
    void proxiesAreAsyncAndToolNamesBecomeIdentifiers() {
        ObjectNode reply = run("""
                r = await mcp_calc.add_two(a=2, b=3)
                print(r["content"][0]["text"], mcp_calc.add_two.__doc__)
                await mcp.runtime.call_tool("calc", "add-two", {"a": 1, "b": 1})
                """, List.of("calc"));
        assertThat(reply.has("error")).as(reply.toString()).isFalse();
        assertThat(reply.path("stdout").asText())
                .startsWith("5 Adds a and b.\n")
                .contains("'text': '2'");
        assertThat(calls).containsExactly("calc.add-two {\"a\":2,\"b\":3}", "calc.add-two {\"a\":1,\"b\":1}");
        assertThat(reply.path("variables_changed").toString()).isEqualTo("[\"r\"]");
    }

    @Test
    void theHostRefusesServersTheRunWasNotGivenWhateverThePythonSideDoes() {
        ObjectNode reply = run("""
                from mcp.runtime import MCPError, call_tool
                for server in ("Other Server", "nope"):
                    try:
                        await call_tool(server, "add-two", {})
                    except MCPError as e:
                        print(e.code)
                print(mcp.runtime.discovered_servers(), await mcp.runtime.list_servers())
                """, List.of("calc"));
        assertThat(reply.path("stdout").asText())
                .isEqualTo("SERVER_NOT_ALLOWED\nUNKNOWN_SERVER\n('Other Server', 'calc') ('calc',)\n");
        assertThat(calls).isEmpty();
        ObjectNode later = run("await mcp_calc.add_two(a=1, b=2)", List.of());
        assertThat(later.path("error").path("type").asText()).isEqualTo("NameError");
        assertThat(calls).isEmpty();
    }

    @Test
    void aToolThatReportsAnErrorRaisesMcpErrorWithItsResult() {
        ObjectNode reply = run("""
                try:
                    await mcp_calc.fail()
                except mcp.runtime.MCPError as e:
                    print(e.code, e, e.result["isError"])
                """, List.of("calc"));
        assertThat(reply.path("stdout").asText()).isEqualTo("TOOL_ERROR calc.fail failed: it failed True\n");
    }

    @Test
    void topLevelAwaitWorksInEveryCellAndTheLastExpressionIsShown() {
        assertThat(session.execute(
                                StepRequest.of("import asyncio\nawait asyncio.sleep(0)\nx = 7", Duration.ofSeconds(10)))
                        .exec()
                        .error())
                .isNull();
        ObjectNode reply = TestReplies.step(session.execute(
                StepRequest.of("async def twice(n):\n    return 2 * n\nawait twice(x)", Duration.ofSeconds(10))));
        assertThat(reply.path("stdout").asText()).isEqualTo("14\n");
        ObjectNode failing = TestReplies.step(session.execute(
                StepRequest.of("async def boom():\n    raise ValueError('no')\nawait boom()", Duration.ofSeconds(10))));
        assertThat(failing.path("error").path("type").asText()).isEqualTo("ValueError");
        assertThat(failing.path("error").path("traceback").asText()).doesNotContain("asyncio", "harness");
    }

    @Test
    void theKernelIsToldAliasesAndToolsButNoCommandOrSecret() {
        BridgeSetup context = new McpCallbacks(servers, List.of("calc"), Duration.ofSeconds(5), JSON).kernelSetup();
        assertThat(Replies.tree(context).toString())
                .contains("\"alias\":\"add_two\"", "\"discovered\":[\"Other Server\",\"calc\"]")
                .doesNotContain("sk-never-shown", "calc-server");
        ObjectNode reply = run("print(repr(mcp_calc), 'mcp_calc' in dir())", List.of("calc"));
        assertThat(reply.path("stdout").asText()).isEqualTo("<MCP server 'calc': add_two, fail> True\n");
        assertThat(TestReplies.answer(session.listVars()).path("variables").toString())
                .doesNotContain("mcp_calc");
    }
}

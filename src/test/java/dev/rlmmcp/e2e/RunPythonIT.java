package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.RunningServer;
import dev.rlmmcp.e2e.support.ServerProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * run_python end to end: the real jar over Streamable HTTP, driven by the official TypeScript client,
 * bridging to a real third-party MCP server (@modelcontextprotocol/server-everything, pinned in
 * e2e/package.json, launched over stdio from e2e/node_modules).
 */
class RunPythonIT {

    private static final String SECRET = "bridge-env-secret-5c2e71";
    private static final String EVERYTHING = "node_modules/@modelcontextprotocol/server-everything/dist/index.js";

    @TempDir
    static Path dir;

    @RegisterExtension
    static final RunningServer server =
            RunningServer.http(RunPythonIT::serverArgs).connect(s -> McpDriver.http(s.mcpUrl()));

    /** The server's arguments, with an MCP config naming two copies of the SDK's "everything" server. */
    private static List<String> serverArgs() {
        Path root = McpDriver.projectRoot();
        String node = McpDriver.findNode().toString();
        String entry = root.resolve("e2e").resolve(EVERYTHING).toString();
        Path config = dir.resolve("mcp.json");
        try {
            Files.writeString(
                    config,
                    McpDriver.MAPPER.writeValueAsString(Map.of(
                            "mcpServers",
                            Map.of(
                                    "everything",
                                            Map.of(
                                                    "command",
                                                    node,
                                                    "args",
                                                    List.of(entry, "stdio"),
                                                    "env",
                                                    Map.of("BRIDGE_SECRET", SECRET)),
                                    "other-everything", Map.of("command", node, "args", List.of(entry, "stdio"))))));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> args = new ArrayList<>(
                List.of("--mcp-config", config.toString(), "--mcp-discovery", "false", "--data-root", dir.toString()));
        args.addAll(ReplToolsContract.SERVER_FLAGS);
        return args;
    }

    private static JsonNode run(String code, Object... more) {
        Map<String, Object> args = new java.util.HashMap<>(Map.of("code", code, "response_format", "json"));
        for (int i = 0; i < more.length; i += 2) {
            args.put((String) more[i], more[i + 1]);
        }
        JsonNode result = server.client().call("run_python", args);
        JsonNode reply = McpDriver.json(result);
        assertThat(result.has("structuredContent")).isFalse();
        assertThat(result.path("isError").asBoolean())
                .isEqualTo(!reply.path("status").asText().equals("success"));
        return reply;
    }

    private static List<String> lines(JsonNode array) {
        List<String> lines = new ArrayList<>();
        array.forEach(l -> lines.add(l.asText()));
        return lines;
    }

    @Test
    void oneProgramCallsSeveralToolsOfARealServer() {
        JsonNode reply = run("""
                r = await mcp_everything.echo(message="hi")
                s = await mcp_everything.get_sum(a=3, b=4)
                print(r["content"][0]["text"])
                print(s["content"][0]["text"])
                """, "servers", List.of("everything"));
        assertThat(reply.path("status").asText()).as(reply.toString()).isEqualTo("success");
        assertThat(lines(reply.path("stdout"))).containsExactly("Echo: hi", "The sum of 3 and 4 is 7.");
        assertThat(reply.path("exitCode").asInt()).isZero();
        assertThat(lines(reply.path("servers"))).containsExactly("everything");
        assertThat(reply.path("summary").asText()).isEqualTo("Success");
        assertThat(reply.path("timeoutSeconds").asInt()).isEqualTo(30);
    }

    @Test
    void repliesAreToonByDefault() {
        JsonNode result = server.client()
                .call(
                        "run_python",
                        Map.of(
                                "code",
                                "print(await mcp_everything.get_sum(a=1, b=1))",
                                "servers",
                                List.of("everything")));
        assertThat(McpDriver.text(result))
                .startsWith("```toon\nstatus: success\nsummary: Success\nexitCode: 0\n"
                        + "servers[1]: everything\nstdout[1]: ")
                .endsWith("\n```");
    }

    @Test
    void theRuntimeModuleListsDescribesAndCalls() {
        JsonNode reply = run("""
                import mcp.runtime as rt
                print(rt.discovered_servers())
                print(await rt.list_servers())
                names = [t["name"] for t in await rt.list_tools("everything")]
                print("get-sum" in names, "echo" in names)
                info = rt.describe_server("everything")
                print(info["alias"], sorted(t["alias"] for t in info["tools"] if t["name"] == "get-sum"))
                r = await rt.call_tool("everything", "get-sum", {"a": 20, "b": 22})
                print(r["content"][0]["text"])
                import asyncio
                both = await asyncio.gather(mcp_everything.echo(message="a"), mcp_everything.echo(message="b"))
                print([b["content"][0]["text"] for b in both])
                many = await asyncio.gather(*[mcp_everything.get_sum(a=i, b=1) for i in range(100)])
                print(sum(int(m["content"][0]["text"].rstrip(".").split()[-1]) for m in many))
                print(LOADED_MCP_SERVERS, type(mcp_servers["everything"]).__name__)
                """, "servers", List.of("everything"));
        assertThat(reply.path("status").asText()).as(reply.toString()).isEqualTo("success");
        assertThat(lines(reply.path("stdout")))
                .containsExactly(
                        "('everything', 'other-everything')",
                        "('everything',)",
                        "True True",
                        "everything ['get_sum']",
                        "The sum of 20 and 22 is 42.",
                        "['Echo: a', 'Echo: b']",
                        "5050",
                        "('everything',) McpProxy");
    }

    @Test
    void onlyTheServersNamedAreReachableWhateverThePythonSideDoes() {
        JsonNode reply = run("""
                import mcp.runtime as rt
                for server in ("other-everything", "nope"):
                    try:
                        await rt.call_tool(server, "echo", {"message": "x"})
                    except rt.MCPError as e:
                        print(e.code, "|", e)
                print(await rt.list_servers())
                """, "servers", List.of("everything"));
        List<String> out = lines(reply.path("stdout"));
        assertThat(out.get(0)).startsWith("SERVER_NOT_ALLOWED | ").contains("other-everything");
        assertThat(out.get(1)).startsWith("UNKNOWN_SERVER | ").contains("nope");
        assertThat(out.get(2)).isEqualTo("('everything',)");
        JsonNode none = run("import mcp.runtime as rt\nawait rt.call_tool('everything', 'echo', {'message': 'x'})");
        assertThat(none.path("status").asText()).isEqualTo("error");
        assertThat(none.path("error").asText()).startsWith("MCPError: ").contains("not loaded in this run");
        assertThat(none.path("exitCode").asInt()).isEqualTo(1);
    }

    @Test
    void anUnknownServerInServersIsAValidationError() {
        JsonNode reply = run("print(1)", "servers", List.of("nope"));
        assertThat(reply.path("status").asText()).isEqualTo("validation_error");
        assertThat(reply.path("argument").asText()).isEqualTo("servers");
        assertThat(reply.path("fix").asText()).contains("everything", "other-everything");
        assertThat(run("  ").path("status").asText()).isEqualTo("validation_error");
        assertThat(run("print(1)", "timeout", 0).path("argument").asText()).isEqualTo("timeout");
    }

    @Test
    void unknownToolsAndBadArgumentsRaiseMcpError() {
        JsonNode reply = run("""
                from mcp.runtime import MCPError
                for call in (lambda: mcp_everything.no_such_tool(), lambda: mcp_everything.get_sum(a="x", b=1)):
                    try:
                        await call()
                    except MCPError as e:
                        print(e.code, "|", "get-sum" in str(e), str(e)[:80].replace("\\n", " "))
                print((await mcp_everything.echo(message="still fine"))["content"][0]["text"])
                """, "servers", List.of("everything"));
        List<String> out = lines(reply.path("stdout"));
        assertThat(out).as(reply.toString()).hasSize(3);
        assertThat(out.get(0)).startsWith("UNKNOWN_TOOL | True ").contains("no_such_tool");
        // what the README's run_python example says: server-everything answers a bad argument with isError
        assertThat(out.get(1)).matches("TOOL_ERROR \\| True .*get-sum.*");
        assertThat(out.get(2)).isEqualTo("Echo: still fine");
    }

    @Test
    void aServerThatDiesMidRunFailsThatCallAndIsRestartedOnTheNextUse() throws Exception {
        run("await mcp_everything.echo(message='warm')", "servers", List.of("everything"));
        CompletableFuture<JsonNode> running =
                CompletableFuture.supplyAsync(() -> run("""
                from mcp.runtime import MCPError
                try:
                    await mcp_everything.trigger_long_running_operation(duration=30, steps=30)
                    print("finished")
                except MCPError as e:
                    print(e.code, "|", e)
                """, "servers", List.of("everything"), "timeout", 60));
        Thread.sleep(1500);
        List<ProcessHandle> bridged = ProcessHandle.of(server.pid())
                .orElseThrow()
                .descendants()
                .filter(p -> p.info().commandLine().orElse("").contains("server-everything"))
                .toList();
        assertThat(bridged).isNotEmpty();
        long started = System.nanoTime();
        bridged.forEach(ProcessHandle::destroyForcibly);
        JsonNode reply = running.get(30, TimeUnit.SECONDS);
        assertThat(System.nanoTime() - started).isLessThan(TimeUnit.SECONDS.toNanos(10));
        assertThat(lines(reply.path("stdout")).getFirst())
                .as(reply.toString())
                .startsWith("SERVER_UNAVAILABLE | ")
                .contains("everything");
        JsonNode again = run(
                "print((await mcp_everything.echo(message='back'))['content'][0]['text'])",
                "servers",
                List.of("everything"));
        assertThat(lines(again.path("stdout"))).as(again.toString()).containsExactly("Echo: back");
    }

    @Test
    void aRunPastItsTimeoutIsStoppedEvenInsideABridgedCall() {
        long started = System.nanoTime();
        JsonNode reply = run(
                "await mcp_everything.trigger_long_running_operation(duration=20, steps=2)",
                "servers",
                List.of("everything"),
                "timeout",
                2);
        assertThat(System.nanoTime() - started).isLessThan(TimeUnit.SECONDS.toNanos(12));
        assertThat(reply.path("status").asText()).as(reply.toString()).isEqualTo("timeout");
        assertThat(reply.path("timeoutSeconds").asInt()).isEqualTo(2);
        assertThat(reply.path("summary").asText()).isEqualTo("Timeout: execution exceeded 2s");
        assertThat(reply.has("exitCode")).isFalse();
        JsonNode spin = run("while True: pass", "timeout", 1);
        assertThat(spin.path("status").asText()).isEqualTo("timeout");
    }

    @Test
    void freshKernelsByDefaultAndASessionWhenAsked() {
        assertThat(run("kept = 5").path("status").asText()).isEqualTo("success");
        JsonNode fresh = run("print(kept)");
        assertThat(fresh.path("status").asText()).isEqualTo("error");
        assertThat(fresh.path("error").asText()).isEqualTo("NameError: name 'kept' is not defined");
        assertThat(lines(fresh.path("stderr"))).anyMatch(l -> l.contains("NameError"));

        JsonNode executed = McpDriver.json(server.client().call("rlm_execute", Map.of("code", "x = 41")));
        String session = executed.path("session_id").asText();
        JsonNode inSession = run("""
                r = await mcp_everything.get_sum(a=x, b=1)
                total = r["content"][0]["text"]
                print(total)
                """, "servers", List.of("everything"), "session_id", session);
        assertThat(lines(inSession.path("stdout"))).containsExactly("The sum of 41 and 1 is 42.");
        assertThat(inSession.path("session_id").asText()).isEqualTo(session);
        JsonNode after = McpDriver.json(
                server.client().call("rlm_execute", Map.of("code", "print(total)", "session_id", session)));
        assertThat(after.path("stdout").asText()).isEqualTo("The sum of 41 and 1 is 42.\n");
        JsonNode missing = run("print(1)", "session_id", "s-nope");
        assertThat(missing.path("status").asText()).isEqualTo("validation_error");
    }

    @Test
    void theBridgedServersSecretsNeverReachTheKernel() {
        JsonNode reply = run("""
                import os, json, mcp.runtime as rt
                print(json.dumps(dict(os.environ)))
                print(json.dumps(rt.describe_server("everything")))
                print(json.dumps(rt.list_loaded_server_metadata()))
                """, "servers", List.of("everything"));
        assertThat(reply.path("status").asText()).as(reply.toString()).isEqualTo("success");
        assertThat(reply.toString()).doesNotContain(SECRET).doesNotContain(EVERYTHING);
        assertThat(server.log()).doesNotContain(SECRET);
    }

    @Test
    void serversAreDiscoveredInTheUsualConfigFiles() throws Exception {
        Path home = Files.createDirectories(dir.resolve("home"));
        Path project = Files.createDirectories(dir.resolve("project"));
        String node = McpDriver.findNode().toString();
        String entry =
                McpDriver.projectRoot().resolve("e2e").resolve(EVERYTHING).toString();
        Files.writeString(
                home.resolve(".claude.json"),
                McpDriver.MAPPER.writeValueAsString(Map.of(
                        "mcpServers", Map.of("from-home", Map.of("command", node, "args", List.of(entry, "stdio"))),
                        "projects",
                                Map.of(
                                        project.toString(),
                                        Map.of(
                                                "mcpServers",
                                                Map.of(
                                                        "from-project",
                                                        Map.of("command", node, "args", List.of(entry, "stdio"))))))));
        Files.writeString(
                project.resolve(".mcp.json"),
                McpDriver.MAPPER.writeValueAsString(Map.of(
                        "mcpServers",
                        Map.of("from-dot-mcp", Map.of("command", node, "args", List.of(entry, "stdio"))))));
        try (ServerProcess discovering =
                        ServerProcess.http(Map.of("HOME", home.toString()), project, "--mcp-discovery", "true");
                McpDriver other = McpDriver.http(discovering.mcpUrl())) {
            JsonNode reply = McpDriver.json(other.call(
                    "run_python", Map.of("response_format", "json", "code", """
                    import mcp.runtime as rt
                    print(rt.discovered_servers())
                    print((await mcp_from_project.echo(message="found"))["content"][0]["text"])
                    """, "servers", List.of("from-project"))));
            assertThat(lines(reply.path("stdout")))
                    .as(reply.toString())
                    .containsExactly("('from-dot-mcp', 'from-home', 'from-project')", "Echo: found");
        }
    }
}

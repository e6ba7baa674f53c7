package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.bridge.BridgeException;
import dev.rlmmcp.bridge.ServerDefinition;
import dev.rlmmcp.bridge.sdk.SdkBridgedServers;
import dev.rlmmcp.e2e.support.McpDriver;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The SDK clients behind run_python against the real server-everything: stdio and Streamable HTTP, idle stop, start failures. */
class BridgeClientsIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static String entry() {
        McpDriver.ensureDeps(McpDriver.projectRoot());
        return McpDriver.projectRoot()
                .resolve("e2e/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
                .toString();
    }

    private static SdkBridgedServers bridge(Duration idle, ServerDefinition... definitions) {
        return new SdkBridgedServers(
                List.of(definitions), JSON, Duration.ofSeconds(30), Duration.ofSeconds(60), idle, "test");
    }

    private static List<ProcessHandle> everythingProcesses() {
        return ProcessHandle.current()
                .children()
                .filter(p -> p.info().commandLine().orElse("").contains("server-everything"))
                .toList();
    }

    private static String text(com.fasterxml.jackson.databind.JsonNode result) {
        return result.path("content").path(0).path("text").asText();
    }

    @Test
    void aStdioServerIsStartedOnFirstUseStoppedWhenIdleAndStartedAgain() throws Exception {
        ServerDefinition everything = ServerDefinition.stdio(
                "everything", McpDriver.findNode().toString(), List.of(entry(), "stdio"), Map.of(), "test");
        try (SdkBridgedServers bridge = bridge(Duration.ofSeconds(1), everything)) {
            assertThat(everythingProcesses()).isEmpty();
            assertThat(text(bridge.callTool(
                            "everything",
                            "echo",
                            JSON.createObjectNode().put("message", "one"),
                            Duration.ofSeconds(30))))
                    .isEqualTo("Echo: one");
            assertThat(everythingProcesses()).hasSize(1);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            while (!everythingProcesses().isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(200);
            }
            assertThat(everythingProcesses()).as("stopped after being idle").isEmpty();
            assertThat(text(bridge.callTool(
                            "everything", "get-sum", JSON.readTree("{\"a\": 2, \"b\": 2}"), Duration.ofSeconds(30))))
                    .isEqualTo("The sum of 2 and 2 is 4.");
        }
        assertThat(everythingProcesses()).as("stopped at close").isEmpty();
    }

    @Test
    void anHttpServerIsReachedOverStreamableHttp() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        ProcessBuilder builder = new ProcessBuilder(McpDriver.findNode().toString(), entry(), "streamableHttp");
        builder.environment().put("PORT", String.valueOf(port));
        Process http = builder.redirectErrorStream(true).start();
        try {
            CompletableFuture<Void> listening = new CompletableFuture<>();
            Thread.ofVirtual().start(() -> {
                try (BufferedReader r =
                        new BufferedReader(new InputStreamReader(http.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        if (line.contains("listening on port")) {
                            listening.complete(null);
                        }
                    }
                } catch (java.io.IOException e) {
                    listening.completeExceptionally(e);
                }
            });
            listening.get(30, TimeUnit.SECONDS);
            ServerDefinition remote = ServerDefinition.http(
                    "remote", "http://127.0.0.1:" + port + "/mcp", Map.of("X-Test", "yes"), "test");
            try (SdkBridgedServers bridge = bridge(Duration.ofMinutes(5), remote)) {
                assertThat(bridge.listTools("remote")).extracting(t -> t.name()).contains("echo", "get-sum");
                assertThat(text(bridge.callTool(
                                "remote",
                                "echo",
                                JSON.createObjectNode().put("message", "over http"),
                                Duration.ofSeconds(30))))
                        .isEqualTo("Echo: over http");
            }
        } finally {
            http.destroyForcibly();
        }
    }

    @Test
    void anHttpServersHeadersAreSentWithEveryRequest() throws Exception {
        List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        com.sun.net.httpserver.HttpServer refusing =
                com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress("127.0.0.1", 0), 0);
        refusing.createContext("/mcp", exchange -> {
            seen.add(exchange.getRequestHeaders().getFirst("Authorization"));
            exchange.sendResponseHeaders(503, -1);
            exchange.close();
        });
        refusing.start();
        try (SdkBridgedServers bridge = bridge(
                Duration.ofMinutes(5),
                ServerDefinition.http(
                        "guarded",
                        "http://127.0.0.1:" + refusing.getAddress().getPort() + "/mcp",
                        Map.of("Authorization", "Bearer sk-hdr"),
                        "test"))) {
            assertThatThrownBy(() -> bridge.listTools("guarded"))
                    .isInstanceOf(BridgeException.class)
                    .hasMessageNotContaining("sk-hdr");
        } finally {
            refusing.stop(0);
        }
        assertThat(seen).isNotEmpty().allMatch("Bearer sk-hdr"::equals);
    }

    @Test
    void aServerThatCannotStartIsReportedWithoutItsSecrets() {
        ServerDefinition broken = ServerDefinition.stdio(
                "broken", "/nonexistent/mcp-server", List.of("--flag"), Map.of("TOKEN", "sk-broken-secret"), "test");
        try (SdkBridgedServers bridge = bridge(Duration.ofMinutes(5), broken)) {
            assertThatThrownBy(() -> bridge.listTools("broken"))
                    .isInstanceOf(BridgeException.class)
                    .hasMessageContaining("cannot start MCP server 'broken'")
                    .hasMessageNotContaining("sk-broken-secret")
                    .extracting(e -> ((BridgeException) e).code())
                    .isEqualTo(BridgeException.SERVER_UNAVAILABLE);
            assertThatThrownBy(() -> bridge.listTools("missing"))
                    .extracting(e -> ((BridgeException) e).code())
                    .isEqualTo(BridgeException.UNKNOWN_SERVER);
        }
    }
}

package dev.rlmmcp.transport.peer;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.cluster.McpSessionHomes;
import dev.rlmmcp.cluster.PeerAuth;
import dev.rlmmcp.cluster.Router;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.TestSettings;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.tools.ToolCatalog;
import dev.rlmmcp.transport.McpServers;
import dev.rlmmcp.transport.http.HttpEndpoint;
import dev.rlmmcp.transport.http.HttpSettings;
import dev.rlmmcp.transport.http.PeerChannel;
import dev.rlmmcp.transport.stateless.TaskSupport;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * One node of a test cluster in this JVM: a real HTTP endpoint with its peer connector, tools that say which
 * node ran them (and send progress, and ask the client for a sampling), and a router the test steers.
 */
final class PeerNode implements AutoCloseable {

    static final String SECRET = "the test cluster's shared secret";
    private static final ObjectMapper JSON = new ObjectMapper();

    final String name;
    /** How this node routes a REPL session id; absent: Local. */
    final Map<String, Function<String, Router.Route>> routes = new ConcurrentHashMap<>();
    /** How this node routes a 2025 MCP session; absent: Local. */
    final Map<String, Router.Route> mcpRoutes = new ConcurrentHashMap<>();
    /** The cluster's record of MCP sessions, shared by the nodes of a test. */
    final Map<String, String> recorded;

    volatile boolean serving = true;
    private final Sessions sessions;
    private final HttpEndpoint endpoint;

    PeerNode(String name, Path dir, Map<String, String> recorded) throws Exception {
        this(name, dir, recorded, HttpSettings.local(0, 1 << 20));
    }

    PeerNode(String name, Path dir, Map<String, String> recorded, HttpSettings http) throws Exception {
        this.name = name;
        this.recorded = recorded;
        sessions = new Sessions(new KernelFactory(TestSettings.in(dir), new ProcessLauncher(), JSON));
        McpServers servers = new McpServers(new ToolCatalog(List.of(), JSON), JSON, features());
        PeerChannel cluster = new PeerChannel(router(), homes(), new PeerAuth(SECRET, name), "127.0.0.1", 0);
        endpoint = new HttpEndpoint(servers, sessions, JSON, http, cluster);
        endpoint.start();
    }

    String url() {
        return "http://127.0.0.1:" + endpoint.address().getPort();
    }

    String peerAddress() {
        return "127.0.0.1:" + endpoint.peerAddress().getPort();
    }

    Router.Remote remote() {
        return new Router.Remote(name, peerAddress());
    }

    private Router router() {
        return new Router() {
            @Override
            public Route route(String sessionId) {
                Function<String, Route> route = routes.get(sessionId);
                return route == null ? new Local() : route.apply(sessionId);
            }

            @Override
            public Route routeMcpSession(String mcpSessionId) {
                return mcpRoutes.getOrDefault(mcpSessionId, new Local());
            }

            @Override
            public String nodeId() {
                return name;
            }

            @Override
            public boolean serving() {
                return serving;
            }
        };
    }

    private McpSessionHomes homes() {
        return new McpSessionHomes() {
            @Override
            public void record(String mcpSessionId, String initializeJson) {
                recorded.put(mcpSessionId, initializeJson);
            }

            @Override
            public Optional<String> initialize(String mcpSessionId) {
                return Optional.ofNullable(recorded.get(mcpSessionId));
            }

            @Override
            public void forget(String mcpSessionId) {
                recorded.remove(mcpSessionId);
            }
        };
    }

    private McpServers.Features features() {
        return new McpServers.Features(
                List.of(
                        tool("whoami", (ex, req) -> text(name)),
                        tool("slow", this::slow),
                        tool("ask", (ex, req) -> text(name + " heard: " + sample(ex)))),
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                false,
                Map.of("slow", TaskSupport.OPTIONAL));
    }

    /** Three progress notifications, 400 ms apart, then the answer. */
    private McpSchema.CallToolResult slow(McpSyncServerExchange exchange, McpSchema.CallToolRequest request) {
        Object token = request.meta() == null ? null : request.meta().get("progressToken");
        for (int i = 1; i <= 3; i++) {
            if (token != null) {
                exchange.progressNotification(
                        new McpSchema.ProgressNotification(token, (double) i, 3.0, "step " + i, null));
            }
            try {
                Thread.sleep(400);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return text(name + " done");
    }

    private static String sample(McpSyncServerExchange exchange) {
        McpSchema.CreateMessageResult reply = exchange.createMessage(McpSchema.CreateMessageRequest.builder()
                .messages(List.of(new McpSchema.SamplingMessage(
                        McpSchema.Role.USER, new McpSchema.TextContent(null, "capital of France?", null))))
                .maxTokens(20)
                .build());
        return reply.content() instanceof McpSchema.TextContent t ? t.text() : "(no text)";
    }

    private static SyncToolSpecification tool(
            String name, BiFunction<McpSyncServerExchange, McpSchema.CallToolRequest, McpSchema.CallToolResult> call) {
        Map<String, Object> schema;
        try {
            schema = JSON.readValue("""
                    {"type": "object", "properties": {"session_id": {"type": "string", "x-mcp-header": "Session-Id"}}}
                    """, new TypeReference<>() {});
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return SyncToolSpecification.builder()
                .tool(McpSchema.Tool.builder(name, schema).description(name).build())
                .callHandler(call)
                .build();
    }

    private static McpSchema.CallToolResult text(String text) {
        return McpSchema.CallToolResult.builder()
                .content(List.of(new McpSchema.TextContent(null, text, null)))
                .build();
    }

    private boolean closed;

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            endpoint.close();
            sessions.close();
        }
    }
}

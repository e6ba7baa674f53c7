package dev.rlmmcp.bridge.sdk;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.bridge.BridgeException;
import dev.rlmmcp.bridge.BridgedServers;
import dev.rlmmcp.bridge.BridgedTool;
import dev.rlmmcp.bridge.ServerDefinition;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bridged servers reached with the official MCP Java SDK's clients: stdio servers as child
 * processes, HTTP servers over Streamable HTTP. A client starts on first use and is kept; one whose
 * process has died is started again on the next use; one idle past the idle timeout is stopped, and
 * all are stopped at close. A stdio server dying mid-call fails that call at once.
 */
public final class SdkBridgedServers implements BridgedServers {

    private static final Logger log = LoggerFactory.getLogger(SdkBridgedServers.class);
    private static final int INVALID_PARAMS = -32602;

    private final Map<String, ServerDefinition> definitions;
    private final ObjectMapper json;
    private final McpJsonMapper mapper;
    private final Duration startTimeout;
    private final Duration requestTimeout;
    private final Duration idleTimeout;
    private final String version;
    private final Map<String, Client> clients = new ConcurrentHashMap<>();
    private final Map<String, Object> locks = new ConcurrentHashMap<>();
    private final Object processStarts = new Object();
    private final ExecutorService calls = Executors.newVirtualThreadPerTaskExecutor();
    private final ScheduledExecutorService sweeper = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon().name("bridge-sweeper").factory());
    private volatile boolean closed;

    public SdkBridgedServers(
            List<ServerDefinition> definitions,
            ObjectMapper json,
            Duration startTimeout,
            Duration requestTimeout,
            Duration idleTimeout,
            String version) {
        this.definitions = definitions.stream()
                .collect(Collectors.toMap(ServerDefinition::name, d -> d, (a, b) -> a, java.util.LinkedHashMap::new));
        this.json = json;
        this.mapper = new JacksonMcpJsonMapper(json);
        this.startTimeout = startTimeout;
        this.requestTimeout = requestTimeout;
        this.idleTimeout = idleTimeout;
        this.version = version;
        long every = Math.max(1, Math.min(30, idleTimeout.toSeconds() / 4));
        sweeper.scheduleWithFixedDelay(this::stopIdle, every, every, TimeUnit.SECONDS);
    }

    @Override
    public List<ServerDefinition> discovered() {
        return List.copyOf(definitions.values());
    }

    @Override
    public Optional<ServerDefinition> find(String name) {
        return Optional.ofNullable(definitions.get(name));
    }

    @Override
    public List<BridgedTool> listTools(String server) {
        Client client = client(server);
        client.used();
        return client.tools;
    }

    @Override
    public ObjectNode callTool(String server, String tool, JsonNode arguments, Duration timeout)
            throws InterruptedException {
        if (arguments != null && !arguments.isNull() && !arguments.isObject()) {
            throw new BridgeException(
                    BridgeException.INVALID_ARGUMENTS,
                    "arguments for " + server + "." + tool + " must be an object (keyword arguments), not "
                            + arguments.getNodeType());
        }
        Client client = client(server);
        if (client.tools.stream().noneMatch(t -> t.name().equals(tool))) {
            throw new BridgeException(
                    BridgeException.UNKNOWN_TOOL,
                    "MCP server '" + server + "' has no tool '" + tool + "'; its tools: "
                            + client.tools.stream().map(BridgedTool::name).collect(Collectors.joining(", ")));
        }
        Map<String, Object> args = arguments == null || arguments.isNull()
                ? Map.of()
                : json.convertValue(arguments, new TypeReference<Map<String, Object>>() {});
        client.inFlight.incrementAndGet();
        CompletableFuture<McpSchema.CallToolResult> call = CompletableFuture.supplyAsync(
                () -> client.sdk.callTool(new McpSchema.CallToolRequest(tool, args)), calls);
        client.process.ifPresent(p -> p.onExit()
                .thenRun(() -> call.completeExceptionally(new BridgeException(
                        BridgeException.SERVER_UNAVAILABLE,
                        "MCP server '" + server + "' exited during the call to " + tool
                                + "; it is started again on the next call"))));
        try {
            return json.valueToTree(call.get(timeout.toMillis(), TimeUnit.MILLISECONDS));
        } catch (TimeoutException e) {
            call.cancel(true);
            throw new BridgeException(
                    BridgeException.TIMEOUT,
                    server + "." + tool + " did not answer within " + timeout.toSeconds() + " s");
        } catch (InterruptedException e) {
            call.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            throw failure(server, tool, client, e.getCause());
        } finally {
            client.inFlight.decrementAndGet();
            client.used();
        }
    }

    private BridgeException failure(String server, String tool, Client client, Throwable cause) {
        if (cause instanceof BridgeException b) {
            stop(server, client);
            return b;
        }
        Throwable root = cause instanceof McpError ? cause : McpError.findRootCause(cause);
        if (root instanceof McpError mcp && mcp.getJsonRpcError() != null) {
            Integer code = mcp.getJsonRpcError().code();
            String message = mcp.getJsonRpcError().message();
            return new BridgeException(
                    code != null && code == INVALID_PARAMS
                            ? BridgeException.INVALID_ARGUMENTS
                            : BridgeException.SERVER_ERROR,
                    server + "." + tool + " failed: " + message);
        }
        stop(server, client);
        return new BridgeException(
                BridgeException.SERVER_UNAVAILABLE,
                "MCP server '" + server + "' stopped answering (" + root.getMessage()
                        + "); it is started again on the next call");
    }

    /** The server's live client, started (or restarted) now if need be. */
    private Client client(String server) {
        if (closed) {
            throw new BridgeException(BridgeException.SERVER_UNAVAILABLE, "the server is shutting down");
        }
        ServerDefinition definition = definitions.get(server);
        if (definition == null) {
            throw new BridgeException(
                    BridgeException.UNKNOWN_SERVER,
                    "no MCP server named '" + server + "' is configured; configured: "
                            + String.join(", ", definitions.keySet()));
        }
        synchronized (locks.computeIfAbsent(server, s -> new Object())) {
            Client current = clients.get(server);
            if (current != null && current.alive()) {
                current.used();
                return current;
            }
            if (current != null) {
                log.info("MCP server {} has exited; starting it again", server);
                stop(server, current);
            }
            Client started = start(definition);
            clients.put(server, started);
            return started;
        }
    }

    private Client start(ServerDefinition definition) {
        long began = System.nanoTime();
        McpSyncClient sdk = null;
        Optional<ProcessHandle> process = Optional.empty();
        try {
            if (definition.isHttp()) {
                sdk = connect(definition, http(definition));
                sdk.initialize();
            } else {
                // The SDK does not expose its child process: it is the JVM's one new child after the start.
                synchronized (processStarts) {
                    Set<Long> before = children();
                    StdioClientTransport transport = new SerialStdioTransport(
                            ServerParameters.builder(definition.command())
                                    .args(definition.args())
                                    .env(definition.env())
                                    .build(),
                            mapper);
                    transport.setStdErrorHandler(line -> log.debug("mcp server {}: {}", definition.name(), line));
                    sdk = connect(definition, transport);
                    sdk.initialize();
                    process = ProcessHandle.current()
                            .children()
                            .filter(p -> !before.contains(p.pid()))
                            .findFirst();
                }
            }
            List<BridgedTool> tools = tools(sdk);
            log.info(
                    "MCP server {} started ({}) in {} ms with {} tools",
                    definition.name(),
                    definition.describe(),
                    (System.nanoTime() - began) / 1_000_000,
                    tools.size());
            return new Client(sdk, process, tools);
        } catch (RuntimeException e) {
            if (sdk != null) {
                sdk.close();
            }
            process.ifPresent(ProcessHandle::destroyForcibly);
            throw new BridgeException(
                    BridgeException.SERVER_UNAVAILABLE,
                    "cannot start MCP server '" + definition.name() + "' (" + definition.describe() + "): "
                            + McpError.aggregateExceptionMessages(e),
                    e);
        }
    }

    private McpSyncClient connect(ServerDefinition definition, McpClientTransport transport) {
        return McpClient.sync(transport)
                .clientInfo(new McpSchema.Implementation("rlm-mcp", version))
                .initializationTimeout(startTimeout)
                .requestTimeout(requestTimeout)
                .build();
    }

    private HttpClientStreamableHttpTransport http(ServerDefinition definition) {
        URI uri = URI.create(definition.url());
        String base = uri.getScheme() + "://" + uri.getRawAuthority();
        String endpoint = (uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath())
                + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
        Map<String, String> headers = definition.headers();
        return HttpClientStreamableHttpTransport.builder(base)
                .endpoint(endpoint)
                .jsonMapper(mapper)
                .connectTimeout(startTimeout)
                .httpRequestCustomizer((request, method, target, body, context) -> headers.forEach(request::setHeader))
                .build();
    }

    private List<BridgedTool> tools(McpSyncClient sdk) {
        List<BridgedTool> tools = new ArrayList<>();
        String cursor = null;
        do {
            McpSchema.ListToolsResult page = cursor == null ? sdk.listTools() : sdk.listTools(cursor);
            for (McpSchema.Tool tool : page.tools()) {
                tools.add(new BridgedTool(
                        tool.name(),
                        tool.description() == null ? "" : tool.description(),
                        json.valueToTree(tool.inputSchema())));
            }
            cursor = page.nextCursor();
        } while (cursor != null && !cursor.isEmpty());
        return List.copyOf(tools);
    }

    private static Set<Long> children() {
        return ProcessHandle.current().children().map(ProcessHandle::pid).collect(Collectors.toSet());
    }

    private void stopIdle() {
        Instant cutoff = Instant.now().minus(idleTimeout);
        clients.forEach((name, client) -> {
            if (client.inFlight.get() == 0 && client.lastUsed.isBefore(cutoff)) {
                synchronized (locks.computeIfAbsent(name, s -> new Object())) {
                    if (clients.get(name) == client && client.inFlight.get() == 0 && client.lastUsed.isBefore(cutoff)) {
                        log.info("MCP server {} idle since {}: stopped", name, client.lastUsed);
                        stop(name, client);
                    }
                }
            }
        });
    }

    private void stop(String name, Client client) {
        clients.remove(name, client);
        client.close();
    }

    @Override
    public void close() {
        closed = true;
        sweeper.shutdownNow();
        clients.forEach(this::stop);
        calls.shutdownNow();
    }

    private static final class Client {

        final McpSyncClient sdk;
        final Optional<ProcessHandle> process;
        final List<BridgedTool> tools;
        final AtomicInteger inFlight = new AtomicInteger();
        volatile Instant lastUsed = Instant.now();

        Client(McpSyncClient sdk, Optional<ProcessHandle> process, List<BridgedTool> tools) {
            this.sdk = sdk;
            this.process = process;
            this.tools = tools;
        }

        boolean alive() {
            return process.map(ProcessHandle::isAlive).orElse(true);
        }

        void used() {
            lastUsed = Instant.now();
        }

        void close() {
            try {
                sdk.closeGracefully();
            } catch (RuntimeException e) {
                log.debug("closing an MCP client: {}", e.toString());
            }
            process.ifPresent(p -> {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            });
        }
    }
}

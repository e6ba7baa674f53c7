package dev.rlmmcp.transport.http;

import dev.rlmmcp.cluster.McpSessionHomes;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.server.McpNotificationHandler;
import io.modelcontextprotocol.server.McpRequestHandler;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import java.io.IOException;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * The 2025 MCP sessions of a cluster: each one started here is recorded with its initialize request, and one
 * whose home node is gone is adopted here under the same {@code Mcp-Session-Id}, by replaying that initialize
 * into a new SDK session, so its client goes on without initializing again. The SDK's session factory always
 * draws a random id, so the adopted session is built from the factory's parts (read by reflection); should a
 * later SDK change them, adoption fails, is logged once, and the client gets the 404 the specification gives
 * for an unknown session, after which it initializes again.
 */
final class McpSessionAdoption {

    private static final Logger log = LoggerFactory.getLogger(McpSessionAdoption.class);
    /** What a legacy SSE stream is recorded with in place of an initialize request. */
    static final String LEGACY_SSE = "{\"jsonrpc\":\"2.0\",\"method\":\"legacy-sse-stream\"}";

    private final McpSessionHomes homes;
    private final McpJsonMapper mapper;
    private volatile boolean failed;

    McpSessionAdoption(McpSessionHomes homes, McpJsonMapper mapper) {
        this.homes = homes;
        this.mapper = mapper;
    }

    void started(String id, McpSchema.JSONRPCRequest initialize) {
        try {
            homes.record(id, mapper.writeValueAsString(initialize));
        } catch (IOException | RuntimeException e) {
            log.warn("recording MCP session {} in the cluster failed: {}", id, e.toString());
        }
    }

    /**
     * A legacy SSE stream opened here: recorded so that other nodes send its {@code POST /message} here. It
     * cannot be adopted (its stream is a connection to this node): when this node is gone, its client gets 404
     * and opens a new stream.
     */
    void streamStarted(String id) {
        try {
            homes.record(id, LEGACY_SSE);
        } catch (RuntimeException e) {
            log.warn("recording SSE stream {} in the cluster failed: {}", id, e.toString());
        }
    }

    void ended(String id) {
        try {
            homes.forget(id);
        } catch (RuntimeException e) {
            log.debug("forgetting MCP session {}: {}", id, e.toString());
        }
    }

    /** The session {@code id}, started again here from its recorded initialize; null if unknown or impossible. */
    McpStreamableServerSession adopt(String id, McpStreamableServerSession.Factory factory) {
        if (failed) {
            return null;
        }
        String recorded = homes.initialize(id).orElse(null);
        McpSchema.InitializeRequest params = recorded == null ? null : initialize(recorded);
        if (params == null) {
            return null;
        }
        try {
            McpStreamableServerSession.McpStreamableServerSessionInit rebuilt = rebuilt(id, params, factory);
            rebuilt.initResult().block();
            McpStreamableServerSession session = rebuilt.session();
            session.accept(new McpSchema.JSONRPCNotification(
                            McpSchema.JSONRPC_VERSION, McpSchema.METHOD_NOTIFICATION_INITIALIZED, null))
                    .block();
            log.info("MCP session {} adopted: its home node is gone", id);
            return session;
        } catch (ReflectiveOperationException | RuntimeException e) {
            failed = true;
            log.warn(
                    "cannot adopt MCP sessions of gone nodes with this MCP SDK ({}): their clients get 404 and "
                            + "initialize again",
                    e.toString());
            return null;
        }
    }

    /**
     * A new session named {@code offered}, the key the balancer hashed its initialize on (see {@link SessionOffer}),
     * so that its later requests, hashed on its id, reach this node, its home; null (the factory then draws an id)
     * if none is offered, the cluster knows that id, or this SDK's parts cannot be read.
     */
    McpStreamableServerSession.McpStreamableServerSessionInit startAs(
            String offered, McpSchema.InitializeRequest params, McpStreamableServerSession.Factory factory) {
        if (offered == null || failed || homes.initialize(offered).isPresent()) {
            return null;
        }
        try {
            return rebuilt(offered, params, factory);
        } catch (ReflectiveOperationException | RuntimeException e) {
            failed = true;
            log.warn("cannot name MCP sessions after the balancer's key with this MCP SDK ({})", e.toString());
            return null;
        }
    }

    /** The params of a recorded initialize request; null for a legacy SSE stream's record or a malformed one. */
    private McpSchema.InitializeRequest initialize(String recorded) {
        try {
            McpSchema.JSONRPCRequest init = mapper.readValue(recorded, McpSchema.JSONRPCRequest.class);
            return McpSchema.METHOD_INITIALIZE.equals(init.method())
                    ? mapper.convertValue(init.params(), new TypeRef<McpSchema.InitializeRequest>() {})
                    : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** A session of id {@code id} built from the factory's parts, and its answer to {@code params} (not yet run). */
    @SuppressWarnings("unchecked")
    private static McpStreamableServerSession.McpStreamableServerSessionInit rebuilt(
            String id, McpSchema.InitializeRequest params, McpStreamableServerSession.Factory factory)
            throws ReflectiveOperationException {
        Duration timeout = (Duration) field(factory, "requestTimeout");
        Map<String, McpRequestHandler<?>> requests =
                (Map<String, McpRequestHandler<?>>) field(factory, "requestHandlers");
        Map<String, McpNotificationHandler> notifications =
                (Map<String, McpNotificationHandler>) field(factory, "notificationHandlers");
        Function<String, Mono<Void>> onClose = (Function<String, Mono<Void>>) field(factory, "onClose");
        JsonSchemaValidator validator = (JsonSchemaValidator) field(factory, "jsonSchemaValidator");
        McpStreamableServerSession.InitRequestHandler init =
                (McpStreamableServerSession.InitRequestHandler) field(factory, "initRequestHandler");
        McpStreamableServerSession session = new McpStreamableServerSession(
                id,
                params.capabilities(),
                params.clientInfo(),
                timeout,
                requests,
                notifications,
                () -> onClose.apply(id),
                validator);
        return new McpStreamableServerSession.McpStreamableServerSessionInit(session, init.handle(params));
    }

    private static Object field(Object owner, String name) throws ReflectiveOperationException {
        Field field = owner.getClass().getDeclaredField(name);
        field.setAccessible(true);
        return field.get(owner);
    }
}

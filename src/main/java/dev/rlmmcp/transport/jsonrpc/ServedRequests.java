package dev.rlmmcp.transport.jsonrpc;

import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.tools.ToolCatalog;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.publisher.Mono;

/**
 * The requests a transport is serving, each with the {@link CallContext} it created for it, by connection
 * and JSON-RPC id: a client's notifications/cancelled (see {@link ClientCancellation}) finds the
 * context here and cancels it. The context reaches the tool handler through the SDK's dispatch, not
 * through this registry: {@link #carrying} writes it into the Reactor context of the Mono the transport
 * blocks on, where the SDK reads its {@link McpTransportContext} for the exchange it hands the tool.
 */
public final class ServedRequests {

    private final Map<Key, Served> served = new ConcurrentHashMap<>();

    /**
     * Registers the request with this id, from this connection, with a new context until the
     * returned handle is closed. Called on the thread that dispatches the request to the SDK.
     */
    public Served serve(String connection, Object requestId) {
        Served request = new Served(this, new Key(connection, normalized(requestId)), CallContext.create());
        served.put(request.key, request);
        return request;
    }

    /** Cancels a request being served; false if there is none with this id (it may have ended already). */
    boolean cancel(String connection, Object requestId) {
        Served request = served.get(new Key(connection, normalized(requestId)));
        if (request == null) {
            return false;
        }
        request.context.cancel();
        return true;
    }

    /** Whether the request with this id is being served and its client cancelled it. */
    boolean isCancelled(String connection, Object requestId) {
        Served request = served.get(new Key(connection, normalized(requestId)));
        return request != null && request.context.cancelled();
    }

    /**
     * Whether {@code outgoing}, a message for {@code connection}, is not to be sent: the answer to a request
     * its client cancelled (see {@link #withholds(CallContext, McpSchema.JSONRPCMessage)}).
     */
    public boolean withholds(String connection, McpSchema.JSONRPCMessage outgoing) {
        Served request = outgoing instanceof McpSchema.JSONRPCResponse answer
                ? served.get(new Key(connection, normalized(answer.id())))
                : null;
        return request != null && request.withholds(outgoing);
    }

    /**
     * The one rule for what a cancelled request sends: no answer, as the MCP specification asks (the client
     * has stopped waiting for it and may reuse its id); what it says before the answer still goes out.
     */
    public static boolean withholds(CallContext context, McpSchema.JSONRPCMessage outgoing) {
        return outgoing instanceof McpSchema.JSONRPCResponse && context.cancelled();
    }

    /** {@code dispatch} with {@code context} in its Reactor context, where the SDK finds it for the tool's exchange. */
    static <T> Mono<T> carrying(Mono<T> dispatch, CallContext context) {
        return carrying(dispatch, context, null);
    }

    /** The same, with the connection whose default REPL session the request uses (null: its MCP session's). */
    static <T> Mono<T> carrying(Mono<T> dispatch, CallContext context, String connection) {
        Map<String, Object> values = connection == null
                ? Map.of(ToolCatalog.CALL_CONTEXT, context)
                : Map.of(ToolCatalog.CALL_CONTEXT, context, ToolCatalog.CONNECTION, connection);
        return dispatch.contextWrite(ctx -> ctx.put(McpTransportContext.KEY, McpTransportContext.create(values)));
    }

    /** JSON ids 7 and 7.0 are the same request, whichever Java number type a parser made of them. */
    static Object normalized(Object id) {
        return id instanceof Number n && n.doubleValue() == n.longValue() ? (Object) n.longValue() : id;
    }

    private record Key(String connection, Object requestId) {}

    /** One request being served; closing it forgets it (a later cancellation of its id finds nothing). */
    public static final class Served implements AutoCloseable {

        private final ServedRequests owner;
        private final Key key;
        private final CallContext context;

        private Served(ServedRequests owner, Key key, CallContext context) {
            this.owner = owner;
            this.key = key;
            this.context = context;
        }

        public CallContext context() {
            return context;
        }

        /** Whether {@code outgoing}, a message of this request, is not to be sent: its answer, once cancelled. */
        public boolean withholds(McpSchema.JSONRPCMessage outgoing) {
            return ServedRequests.withholds(context, outgoing);
        }

        /** {@code dispatch} carrying this request's context to the tool handler. */
        public <T> Mono<T> carrying(Mono<T> dispatch) {
            return ServedRequests.carrying(dispatch, context);
        }

        /** The same, the request using the default REPL session of {@code connection} (null: its MCP session's). */
        public <T> Mono<T> carrying(Mono<T> dispatch, String connection) {
            return ServedRequests.carrying(dispatch, context, connection);
        }

        @Override
        public void close() {
            owner.served.remove(key, this);
        }
    }
}

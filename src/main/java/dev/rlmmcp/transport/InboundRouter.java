package dev.rlmmcp.transport;

import dev.rlmmcp.transport.jsonrpc.ClientCancellation;
import dev.rlmmcp.transport.jsonrpc.JsonRpc;
import dev.rlmmcp.transport.jsonrpc.ServedRequests;
import dev.rlmmcp.transport.stateless.Refusal;
import dev.rlmmcp.transport.stateless.StatelessServer;
import dev.rlmmcp.transport.stateless.StatelessTools;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * The inbound steps every MCP transport shares once it has framed a message (a line on stdio, a POSTed
 * body on HTTP): parse and refuse, choose the revision (the SDK session of the 2025 revisions, or the
 * stateless revision of 2026-07-28), act on a client's notifications/cancelled, register each request as
 * served with its own {@link dev.rlmmcp.base.CallContext}, and dispatch. Its counterpart on the way out,
 * {@link #withheld} and {@link CallChannel}, keeps the rule that the answer to a request the client
 * cancelled is not sent. A transport keeps only its framing: how a message comes in and how an answer or
 * a refusal goes out.
 */
public final class InboundRouter {

    /** What a transport does with a message for its SDK session (2025 revisions). */
    public interface Session {
        /** Serves a request, registered as served (so cancellable) until this returns. */
        void call(McpSchema.JSONRPCRequest call, ServedRequests.Served served);

        /** Hands a notification or a client's response to the SDK session. */
        void accept(McpSchema.JSONRPCMessage message) throws IOException;
    }

    /** How a transport answers a request of the stateless revision. */
    public interface Stateless {
        /** Answers a request refused before it was served (HTTP: with the refusal's status). */
        void refuse(Refusal refusal, Object id) throws IOException;

        /** The channel the request's messages go out on. */
        CallChannel channel(McpSchema.JSONRPCRequest call, ServedRequests.Served served);

        /** Answers a request whose handling threw. */
        void failed(McpSchema.JSONRPCRequest call, RuntimeException e) throws IOException;
    }

    private final McpJsonMapper mapper;
    private final ServedRequests served = new ServedRequests();
    private final StatelessServer stateless;
    private final ToolOffer offer;

    /**
     * {@code earlierVersions}: the protocol versions before the stateless revision that the transport speaks;
     * {@code offer}: which tools each connection's client is listed.
     */
    public InboundRouter(
            McpJsonMapper mapper, StatelessTools tools, Supplier<List<String>> earlierVersions, ToolOffer offer) {
        this.mapper = mapper;
        this.stateless = new StatelessServer(mapper, tools, served, earlierVersions);
        this.offer = offer;
    }

    /** For a transport that speaks only the 2025 revisions (legacy SSE): nothing is stateless. */
    public InboundRouter(McpJsonMapper mapper, ToolOffer offer) {
        this.mapper = mapper;
        this.stateless = null;
        this.offer = offer;
    }

    /** Which tools each connection's client is listed (see {@link #outgoing}). */
    public ToolOffer offer() {
        return offer;
    }

    /** The stateless revision, for what the transport asks of it beyond routing (its lifecycle, its refusals). */
    public StatelessServer stateless() {
        return stateless;
    }

    /** The message in bytes[offset, offset + length), or the refusal of one that is not well-formed JSON-RPC. */
    public McpSchema.JSONRPCMessage parse(byte[] bytes, int offset, int length) throws JsonRpc.Refused {
        return JsonRpc.parse(mapper, bytes, offset, length);
    }

    public McpSchema.JSONRPCMessage parse(byte[] bytes) throws JsonRpc.Refused {
        return parse(bytes, 0, bytes.length);
    }

    /**
     * How a body that is not well-formed JSON-RPC is refused where a refusal has a status (HTTP): 400, or the
     * stateless revision's 404 when the MCP-Protocol-Version header names it and the body asks for a method
     * it removed (whose params are checked as the earlier revisions define them). Answer with the id of
     * {@code e}.
     */
    public Refusal refusal(JsonRpc.Refused e, String headerVersion, byte[] body) {
        Refusal removed =
                stateless != null && stateless.claimsHeader(headerVersion) ? stateless.removedMethod(body) : null;
        return removed != null ? removed : new Refusal(400, e.code(), e.getMessage(), null);
    }

    /**
     * Whether the stateless revision serves this message: the MCP-Protocol-Version header
     * ({@code headerVersion}, null where absent or on stdio) names it, or else the message's _meta does.
     */
    public boolean isStateless(String headerVersion, McpSchema.JSONRPCMessage message) {
        return stateless != null && stateless.claims(headerVersion, message);
    }

    /** Dispatches a message of the 2025 revisions from {@code connection}, the id of its SDK session. */
    public void dispatch(String connection, McpSchema.JSONRPCMessage message, Session session) throws IOException {
        dispatch(connection, message, session, Runnable::run);
    }

    /**
     * The same, a request served on {@code calls}: registered as served before it is handed over, so a
     * cancellation that comes right after it finds it.
     */
    public void dispatch(String connection, McpSchema.JSONRPCMessage message, Session session, Executor calls)
            throws IOException {
        if (ClientCancellation.handled(served, connection, message) || unused(message)) {
            return;
        }
        offer.seen(connection, message);
        if (!(message instanceof McpSchema.JSONRPCRequest call)) {
            session.accept(message);
            return;
        }
        ServedRequests.Served serving = served.serve(connection, call.id());
        try {
            calls.execute(() -> {
                try (serving) {
                    session.call(call, serving);
                }
            });
        } catch (RuntimeException e) {
            serving.close();
            throw e;
        }
    }

    /**
     * A notification the server has no use for: it uses no roots, and the SDK would answer a changed roots
     * list by asking the client for its roots, which a client that declared no roots capability cannot
     * answer (on legacy SSE, the POST of the notification then waited for that answer).
     */
    private static boolean unused(McpSchema.JSONRPCMessage message) {
        return message instanceof McpSchema.JSONRPCNotification n
                && McpSchema.METHOD_NOTIFICATION_ROOTS_LIST_CHANGED.equals(n.method());
    }

    /**
     * Dispatches a message of the stateless revision from {@code connection}: a cancellation is acted on,
     * another notification needs nothing, a response is refused, a request is checked ({@code headers}: an
     * HTTP request's, by name; null on stdio) and served, using the default REPL session of
     * {@code replConnection} when it names none.
     */
    public void dispatchStateless(
            String connection,
            String replConnection,
            UnaryOperator<String> headers,
            McpSchema.JSONRPCMessage message,
            Stateless transport)
            throws IOException {
        if (ClientCancellation.handled(served, connection, message)
                || message instanceof McpSchema.JSONRPCNotification) {
            return;
        }
        if (!(message instanceof McpSchema.JSONRPCRequest call)) {
            transport.refuse(stateless.noResponses(), null);
            return;
        }
        Refusal refusal = stateless.check(headers, call);
        if (refusal != null) {
            transport.refuse(refusal, call.id());
            return;
        }
        try (ServedRequests.Served serving = served.serve(connection, call.id())) {
            stateless.serve(call, replConnection, transport.channel(call, serving));
        } catch (RuntimeException e) {
            transport.failed(call, e);
        }
    }

    /** Whether a message for {@code connection}'s SDK session is not to be sent: the answer to a cancelled request. */
    public boolean withheld(String connection, McpSchema.JSONRPCMessage outgoing) {
        return served.withholds(connection, outgoing);
    }

    /**
     * How a message of the 2025 revisions goes out on {@code connection}: as the SDK sends it, but a tools/list
     * answer lists only the tools its client can use ({@link ToolOffer}).
     */
    public McpSchema.JSONRPCMessage outgoing(String connection, McpSchema.JSONRPCMessage message) {
        return offer.outgoing(connection, message);
    }

    /** Forgets what was noted of an ended connection. */
    public void ended(String connection) {
        offer.ended(connection);
    }
}

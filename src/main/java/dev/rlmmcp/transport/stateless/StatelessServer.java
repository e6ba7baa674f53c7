package dev.rlmmcp.transport.stateless;

import dev.rlmmcp.transport.jsonrpc.JsonRpc;
import dev.rlmmcp.transport.jsonrpc.ServedRequests;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * The requests of protocol 2026-07-28 once their transport has checked them, the same on HTTP and stdio:
 * server/discover, the tasks extension's methods, subscriptions/listen, and every other method through the
 * SDK session for the request's client capabilities, in input rounds where its handler asks the client
 * something and as a task where it runs long (see {@link InputRounds}, {@link Tasks}).
 */
public final class StatelessServer {

    /** Where a subscription's messages go: an event stream of the transport's. */
    public interface Sink {
        /** Sends a message; false once the client is gone. */
        boolean send(McpSchema.JSONRPCMessage message);

        /** Ends the stream (after its last message). */
        public void close();
    }

    /** How a transport carries what a request of this revision sends back. */
    public interface Channel {
        /** Sends a message of the request, dressed for the revision ({@link StatelessProtocol#outgoing}). */
        void send(McpSchema.JSONRPCMessage message);

        /** Serves the request through the SDK session on this thread, its messages sent on this channel. */
        void answer(McpStreamableServerSession session, McpSchema.JSONRPCRequest call, String connection);

        /** A stream for a subscription, or null where this request can have none. */
        StatelessServer.Sink stream();
    }

    /** The protocol version of this revision, and the header an HTTP request names its version in. */
    public static final String VERSION = StatelessProtocol.VERSION;

    public static final String VERSION_HEADER = StatelessProtocol.VERSION_HEADER;
    /** The method that tells a client what this server offers, in place of initialize. */
    public static final String METHOD_DISCOVER = StatelessProtocol.METHOD_DISCOVER;

    /** An {@code Mcp-Param-*} header's value: as sent, or decoded from {@code =?base64?...?=}; null if invalid. */
    public static String paramHeaderValue(String sent) {
        return ParamHeaders.decoded(sent.strip());
    }

    private final StatelessProtocol protocol;
    private final Tasks tasks;
    private final InputRounds rounds;
    private final Subscriptions subscriptions;
    private final Supplier<List<String>> earlierVersions;

    /** {@code earlierVersions}: the protocol versions before this revision that the transport speaks. */
    public StatelessServer(
            McpJsonMapper mapper, StatelessTools tools, ServedRequests served, Supplier<List<String>> earlierVersions) {
        this.protocol = new StatelessProtocol(mapper, tools);
        this.tasks = new Tasks(mapper);
        this.rounds = new InputRounds(mapper, served, tasks);
        this.subscriptions = new Subscriptions(tasks, result -> protocol.dressed(Subscriptions.METHOD, result));
        this.earlierVersions = earlierVersions;
    }

    /**
     * Whether a request's _meta names this revision and holds the client's capabilities (what a request of it
     * needs to be served, besides a method it has); null _meta: no.
     */
    public static boolean isComplete(Map<?, ?> meta) {
        return isOwn(meta) && meta.get(StatelessProtocol.META_CAPABILITIES) instanceof Map<?, ?>;
    }

    /** Whether a request's _meta (null: none) declares the client's sampling capability. */
    public static boolean declaresSampling(Map<?, ?> meta) {
        return meta != null
                && meta.get(StatelessProtocol.META_CAPABILITIES) instanceof Map<?, ?> capabilities
                && capabilities.get("sampling") != null;
    }

    /** Whether a request's _meta (null: none) names this revision as its protocol version. */
    public static boolean isOwn(Map<?, ?> meta) {
        return meta != null
                && meta.get(StatelessProtocol.META_VERSION) instanceof String version
                && StatelessProtocol.VERSIONS.contains(version);
    }

    /** Whether a message with this MCP-Protocol-Version header (null when absent) is one of this revision. */
    public boolean claims(String headerVersion, McpSchema.JSONRPCMessage message) {
        return StatelessProtocol.claims(headerVersion, message);
    }

    /** Whether the MCP-Protocol-Version header (null when absent) names this revision. */
    public boolean claimsHeader(String headerVersion) {
        return StatelessProtocol.claimsHeader(headerVersion);
    }

    /**
     * What is wrong with a request of this revision, as the error to answer with, or null when it may be
     * served: {@code headers} looks up an HTTP request's headers by name; null on stdio, which has none.
     */
    public Refusal check(UnaryOperator<String> headers, McpSchema.JSONRPCRequest call) {
        return headers == null ? protocol.check(call) : protocol.check(headers, call);
    }

    /** The refusal of a body that asks for a method this revision removed, or null if it asks for none. */
    public Refusal removedMethod(byte[] body) {
        return protocol.removedMethod(body);
    }

    /** The refusal of a request that names a protocol version the transport does not speak. */
    public Refusal unsupported(String requested) {
        return StatelessProtocol.unsupported(requested, supportedVersions());
    }

    /** The refusal of a response from a client, which this revision has no place for. */
    public Refusal noResponses() {
        return new Refusal(
                400,
                McpSchema.ErrorCodes.INVALID_REQUEST,
                "protocol " + StatelessProtocol.VERSION
                        + " has no responses from clients: answers to a server's input requests come in the retried request",
                null);
    }

    /** How this revision sends what the SDK sends while serving {@code call}; null: not sent. */
    public UnaryOperator<McpSchema.JSONRPCMessage> outgoing(McpSchema.JSONRPCRequest call) {
        return message -> protocol.outgoing(call, message);
    }

    /** The HTTP status of an answer of this revision. */
    public int status(McpSchema.JSONRPCResponse answer) {
        return StatelessProtocol.status(answer);
    }

    /** Every protocol version the transport speaks, oldest first: the earlier ones, then this revision. */
    List<String> supportedVersions() {
        List<String> all = new ArrayList<>(earlierVersions.get());
        all.addAll(StatelessProtocol.VERSIONS);
        return all;
    }

    public void setSessionFactory(McpStreamableServerSession.Factory factory) {
        protocol.setSessionFactory(factory);
    }

    /** Serves a checked request; a call without session_id uses the default REPL session of {@code connection}. */
    public void serve(McpSchema.JSONRPCRequest call, String connection, Channel channel) {
        if (StatelessProtocol.METHOD_DISCOVER.equals(call.method())) {
            channel.send(McpSchema.JSONRPCResponse.result(call.id(), protocol.discover(call, supportedVersions())));
            return;
        }
        if (Tasks.handles(call.method())) {
            channel.send(tasks.handle(call));
            return;
        }
        if (Subscriptions.METHOD.equals(call.method())) {
            listen(call, channel);
            return;
        }
        TaskSupport support = protocol.taskSupport(call);
        boolean declared = Tasks.declared(call);
        if (support == TaskSupport.REQUIRED && !declared) {
            channel.send(Tasks.undeclared(call, "tool " + ((Map<?, ?>) call.params()).get("name")));
            return;
        }
        TaskSupport asTask = declared ? support : TaskSupport.FORBIDDEN;
        if (InputRounds.resumable(call) || asTask != TaskSupport.FORBIDDEN) {
            channel.send(rounds.serve(call, () -> protocol.session(call), connection, channel::send, asTask));
        } else {
            channel.answer(protocol.session(call), call, connection);
        }
    }

    private void listen(McpSchema.JSONRPCRequest call, Channel channel) {
        McpSchema.JSONRPCResponse refused = Subscriptions.refusal(call);
        if (refused != null) {
            channel.send(refused);
            return;
        }
        StatelessServer.Sink stream = channel.stream();
        if (stream == null) {
            channel.send(JsonRpc.errorAnswer(
                    call,
                    McpSchema.ErrorCodes.INVALID_REQUEST,
                    "subscriptions/listen answers "
                            + "with an event stream: the Accept header must allow text/event-stream"));
            return;
        }
        subscriptions.open(call, stream);
    }

    /** Forgets what has waited too long: calls whose client did not come back, tasks past their time to live. */
    /**
     * Starts every task id and request state this server hands out with {@code tag} (in a cluster: this node's
     * sealed name and peer address), so that a retry or a tasks/get landing on another node is routed here.
     */
    public void tagIds(String tag) {
        tasks.tag(tag);
        rounds.tag(tag);
    }

    public void sweep() {
        rounds.sweep();
        tasks.sweep();
    }

    /** At shutdown, first: each subscription ends with its listen request's result. */
    public void endSubscriptions() {
        subscriptions.close();
    }

    /** At shutdown: subscriptions end with their result, and what calls and tasks ask of clients fails. */
    public void close() {
        rounds.close();
        subscriptions.close();
        tasks.close();
    }
}

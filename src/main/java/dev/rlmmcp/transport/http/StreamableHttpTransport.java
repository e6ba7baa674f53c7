package dev.rlmmcp.transport.http;

import dev.rlmmcp.transport.CallChannel;
import dev.rlmmcp.transport.InboundRouter;
import dev.rlmmcp.transport.ToolOffer;
import dev.rlmmcp.transport.jsonrpc.JsonRpc;
import dev.rlmmcp.transport.jsonrpc.ServedRequests;
import dev.rlmmcp.transport.stateless.Refusal;
import dev.rlmmcp.transport.stateless.StatelessServer;
import dev.rlmmcp.transport.stateless.StatelessTools;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import io.modelcontextprotocol.spec.McpStreamableServerTransportProvider;
import io.modelcontextprotocol.spec.ProtocolVersions;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * MCP Streamable HTTP at one endpoint, for the SDK's streamable sessions. It replaces the SDK's
 * servlet provider, which answers every request as an asynchronous SSE stream. Here a request is
 * handled on the servlet thread and its answer is plain JSON unless the server has something to
 * say before the answer (a progress notification, a sampling request): then the response turns
 * into an SSE stream at that moment. Error bodies are JSON-RPC errors, never Java exceptions; a
 * message that is not well-formed JSON-RPC, or whose params have the wrong shape, is refused with
 * 400 before the SDK sees it (see {@link JsonRpc}).
 * A GET has no standalone stream to offer and answers 405, as the specification allows. Every request
 * gets a {@link dev.rlmmcp.base.CallContext}, handed to the SDK with it; a client's
 * notifications/cancelled cancels the context of the call it names (see {@link ServedRequests}).
 *
 * <p>A request POSTed without a session and without an initialize first (a client that only ever
 * calls tools) is served by one shared default session. A session unused for the idle time is ended as if the
 * client had sent DELETE. An {@code MCP-Protocol-Version} header naming a version this server does
 * not speak is refused with 400.
 */
final class StreamableHttpTransport extends HttpServlet implements McpStreamableServerTransportProvider {

    static final String SESSION_HEADER = "Mcp-Session-Id";
    static final String PROTOCOL_VERSION_HEADER = StatelessServer.VERSION_HEADER;
    private static final Logger log = LoggerFactory.getLogger(StreamableHttpTransport.class);

    private final transient McpJsonMapper mapper;
    private final int maxRequestBytes;
    private final transient Consumer<String> sessionEnded;
    private final transient Map<String, McpStreamableServerSession> sessions = new ConcurrentHashMap<>();
    private static final AtomicInteger ZERO = new AtomicInteger();
    private static final AtomicLong STATELESS_CALLS = new AtomicLong();

    private final transient Map<String, Long> lastUsed = new ConcurrentHashMap<>();
    private final transient Map<String, AtomicInteger> busy = new ConcurrentHashMap<>();
    private final transient ScheduledExecutorService sweeper;
    private final long idleNanos;
    private transient McpStreamableServerSession.Factory sessionFactory;
    private transient McpStreamableServerSession direct;
    private final transient InboundRouter router;
    /** The cluster's record of MCP sessions, or null on a single node. */
    private final transient McpSessionAdoption homes;

    private volatile boolean closing;

    /**
     * {@code sessionEnded} hears the id of every MCP session that ends (DELETE, idle, shutdown), to
     * release what it held; a session unused for {@code idle} ends. {@code homes} (null on a single node)
     * records each session in the cluster and adopts those of gone nodes.
     */
    StreamableHttpTransport(
            McpJsonMapper mapper,
            int maxRequestBytes,
            Duration idle,
            Consumer<String> sessionEnded,
            StatelessTools tools,
            ToolOffer offer,
            McpSessionAdoption homes) {
        this.mapper = mapper;
        this.homes = homes;
        this.maxRequestBytes = maxRequestBytes;
        this.sessionEnded = sessionEnded;
        this.idleNanos = idle.toNanos();
        this.router = new InboundRouter(mapper, tools, this::protocolVersions, offer);
        this.sweeper = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().daemon().name("mcp-session-sweeper").factory());
        long every = Math.max(1, Math.min(idle.toMillis() / 4, 60_000));
        sweeper.scheduleWithFixedDelay(this::sweep, every, every, TimeUnit.MILLISECONDS);
    }

    private void sweep() {
        router.stateless().sweep();
        long now = System.nanoTime();
        lastUsed.forEach((id, used) -> {
            if (now - used > idleNanos && busy.getOrDefault(id, ZERO).get() == 0) {
                McpStreamableServerSession session = sessions.remove(id);
                lastUsed.remove(id);
                busy.remove(id);
                if (session != null) {
                    log.info("MCP session {} idle for {} s: ended", id, TimeUnit.NANOSECONDS.toSeconds(idleNanos));
                    end(id, session);
                }
            }
        });
    }

    private void end(String id, McpStreamableServerSession session) {
        if (homes != null) {
            homes.ended(id);
        }
        try {
            session.delete().block();
        } catch (RuntimeException e) {
            log.debug("ending session {}: {}", id, e.toString());
        }
        router.ended(id);
        sessionEnded.accept(id);
    }

    @Override
    public void setSessionFactory(McpStreamableServerSession.Factory sessionFactory) {
        this.sessionFactory = sessionFactory;
        router.stateless().setSessionFactory(sessionFactory);
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
        Accepted accepted = accepted(request, response);
        byte[] body = accepted == null ? null : JsonResponse.readBody(request, response, maxRequestBytes);
        if (body == null) {
            return;
        }
        String version = request.getHeader(PROTOCOL_VERSION_HEADER);
        McpSchema.JSONRPCMessage message;
        try {
            message = router.parse(body);
        } catch (JsonRpc.Refused e) {
            Refusal refusal = router.refusal(e, version, body);
            writeJson(response, refusal.status(), refusal.answer(e.id()));
            return;
        }
        if (!(message instanceof McpSchema.JSONRPCRequest)) {
            response.setStatus(202);
        }
        if (router.isStateless(version, message)) {
            // each POST is a connection of its own; a call without session_id uses the default REPL session
            String replConnection = message instanceof McpSchema.JSONRPCRequest ? direct().getId() : null;
            router.dispatchStateless(
                    "stateless-" + STATELESS_CALLS.incrementAndGet(),
                    replConnection,
                    request::getHeader,
                    message,
                    new StatelessPost(request, response, accepted));
            return;
        }
        if (version != null && !protocolVersions().contains(version)) {
            Refusal refusal = router.stateless().unsupported(version);
            writeJson(response, refusal.status(), refusal.answer(idOf(message)));
            return;
        }
        if (message instanceof McpSchema.JSONRPCRequest init && McpSchema.METHOD_INITIALIZE.equals(init.method())) {
            initialize(init, request, response);
            return;
        }
        McpStreamableServerSession session = session(request, response, message);
        if (session == null) {
            return;
        }
        try {
            router.dispatch(session.getId(), message, new SessionPost(request, response, accepted, session));
        } catch (RuntimeException e) {
            failed(response, message, e);
        }
    }

    /** What the client's Accept header allows the answer to be. */
    record Accepted(boolean json, boolean sse) {}

    /** What the POST's answer may be, or null after refusing it (shutting down, or an Accept header that fits not). */
    private Accepted accepted(HttpServletRequest request, HttpServletResponse response) throws IOException {
        if (closing) {
            JsonResponse.refuseUnread(
                    request, response, 503, McpSchema.ErrorCodes.INTERNAL_ERROR, "the server is shutting down");
            return null;
        }
        String accept = request.getHeader("Accept");
        Accepted accepted = new Accepted(accepts(accept, "application/json"), accepts(accept, "text/event-stream"));
        if (!accepted.json() && !accepted.sse()) {
            JsonResponse.refuseUnread(
                    request,
                    response,
                    406,
                    McpSchema.ErrorCodes.INVALID_REQUEST,
                    "the Accept header must allow application/json and text/event-stream");
            return null;
        }
        return accepted;
    }

    /** A POSTed message of the 2025 revisions, for its MCP session. */
    private final class SessionPost implements InboundRouter.Session {

        private final HttpServletRequest request;
        private final HttpServletResponse response;
        private final Accepted accepted;
        private final McpStreamableServerSession session;

        SessionPost(
                HttpServletRequest request,
                HttpServletResponse response,
                Accepted accepted,
                McpStreamableServerSession session) {
            this.request = request;
            this.response = response;
            this.accepted = accepted;
            this.session = session;
        }

        @Override
        public void call(McpSchema.JSONRPCRequest call, ServedRequests.Served served) {
            AtomicInteger running = busy.computeIfAbsent(session.getId(), k -> new AtomicInteger());
            running.incrementAndGet();
            SessionOffer.carry(request, served.context());
            try {
                new HttpExchange(
                                mapper,
                                sweeper,
                                request,
                                response,
                                accepted,
                                served,
                                message -> router.outgoing(session.getId(), message),
                                answer -> 200)
                        .answer(session, call, null);
            } finally {
                running.decrementAndGet();
                lastUsed.computeIfPresent(session.getId(), (k, v) -> System.nanoTime());
            }
        }

        @Override
        public void accept(McpSchema.JSONRPCMessage message) throws IOException {
            if (message instanceof McpSchema.JSONRPCResponse reply) {
                try {
                    session.accept(reply).block();
                } catch (RuntimeException e) {
                    error(
                            response,
                            400,
                            McpSchema.ErrorCodes.INVALID_REQUEST,
                            "a response for id " + reply.id()
                                    + ", which names no request of this server that awaits an answer",
                            null);
                }
            } else if (message instanceof McpSchema.JSONRPCNotification notification) {
                session.accept(notification).block();
            }
        }
    }

    /**
     * A POSTed message of protocol 2026-07-28: served by the SDK session for its client's capabilities, in
     * rounds where its handler may ask the client for input (see {@link StatelessServer}).
     */
    private final class StatelessPost implements InboundRouter.Stateless {

        private final HttpServletRequest request;
        private final HttpServletResponse response;
        private final Accepted accepted;

        StatelessPost(HttpServletRequest request, HttpServletResponse response, Accepted accepted) {
            this.request = request;
            this.response = response;
            this.accepted = accepted;
        }

        @Override
        public void refuse(Refusal refusal, Object id) throws IOException {
            writeJson(response, refusal.status(), refusal.answer(id));
        }

        @Override
        public CallChannel channel(McpSchema.JSONRPCRequest call, ServedRequests.Served served) {
            SessionOffer.carry(request, served.context());
            return new HttpExchange(
                    mapper,
                    sweeper,
                    request,
                    response,
                    accepted,
                    served,
                    router.stateless().outgoing(call),
                    router.stateless()::status);
        }

        @Override
        public void failed(McpSchema.JSONRPCRequest call, RuntimeException e) throws IOException {
            StreamableHttpTransport.this.failed(response, call, e);
        }
    }

    /** The answer to a message whose handling threw, unless an answer has begun. */
    private void failed(HttpServletResponse response, McpSchema.JSONRPCMessage message, RuntimeException e)
            throws IOException {
        McpError refusal = JsonRpc.protocolError(e);
        if (refusal != null && message instanceof McpSchema.JSONRPCRequest call && !response.isCommitted()) {
            // a handler that refused its params before its Mono started: the answer other transports give
            writeJson(
                    response,
                    200,
                    JsonRpc.withoutTraces(McpSchema.JSONRPCResponse.error(call.id(), refusal.getJsonRpcError())));
            return;
        }
        log.warn("handling {} failed", message, e);
        if (!response.isCommitted()) {
            error(response, 500, McpSchema.ErrorCodes.INTERNAL_ERROR, JsonRpc.internalError(e), idOf(message));
        }
    }

    @Override
    protected void doPut(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setHeader("Allow", "POST, DELETE");
        JsonResponse.refuseUnread(
                request, response, 405, McpSchema.ErrorCodes.INVALID_REQUEST, "POST requests to this endpoint");
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setHeader("Allow", "POST, DELETE");
        error(
                response,
                405,
                McpSchema.ErrorCodes.INVALID_REQUEST,
                "this server offers no standalone SSE stream; POST requests to this endpoint",
                null);
    }

    @Override
    protected void doDelete(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String id = request.getHeader(SESSION_HEADER);
        McpStreamableServerSession session = id == null ? null : sessions.remove(id);
        if (session == null) {
            error(
                    response,
                    id == null ? 400 : 404,
                    McpSchema.ErrorCodes.INVALID_REQUEST,
                    id == null ? "DELETE needs the Mcp-Session-Id header" : "no session " + id,
                    null);
            return;
        }
        lastUsed.remove(id);
        busy.remove(id);
        end(id, session);
        response.setStatus(200);
    }

    private void initialize(McpSchema.JSONRPCRequest init, HttpServletRequest request, HttpServletResponse response)
            throws IOException {
        McpSchema.InitializeRequest params;
        try {
            params = mapper.convertValue(init.params(), new TypeRef<McpSchema.InitializeRequest>() {});
        } catch (RuntimeException e) {
            error(
                    response,
                    400,
                    McpSchema.ErrorCodes.INVALID_PARAMS,
                    JsonRpc.clean(e.getMessage()) ? e.getMessage() : "params of initialize do not match the MCP schema",
                    init.id());
            return;
        }
        var named = homes == null ? null : homes.startAs(SessionOffer.offered(request), params, sessionFactory);
        McpStreamableServerSession.McpStreamableServerSessionInit started =
                named != null ? named : sessionFactory.startSession(params);
        router.offer().initialized(started.session().getId(), params);
        sessions.put(started.session().getId(), started.session());
        lastUsed.put(started.session().getId(), System.nanoTime());
        McpSchema.InitializeResult result = started.initResult().block();
        if (homes != null) {
            homes.started(started.session().getId(), init);
        }
        response.setHeader(SESSION_HEADER, started.session().getId());
        writeJson(response, 200, McpSchema.JSONRPCResponse.result(init.id(), result));
    }

    private McpStreamableServerSession session(
            HttpServletRequest request, HttpServletResponse response, McpSchema.JSONRPCMessage message)
            throws IOException {
        String sessionId = request.getHeader(SESSION_HEADER);
        if (sessionId == null) {
            return direct();
        }
        McpStreamableServerSession session = sessions.get(sessionId);
        if (session == null && homes != null) {
            // the routing filter sent it here: its home is this node, or its home is gone and this node adopts it
            session = sessions.computeIfAbsent(sessionId, id -> homes.adopt(id, sessionFactory));
        }
        if (session == null) {
            error(
                    response,
                    404,
                    McpSchema.ErrorCodes.INVALID_REQUEST,
                    "no session " + sessionId + " (it ended or never existed): initialize again",
                    idOf(message));
            return null;
        }
        lastUsed.put(sessionId, System.nanoTime());
        return session;
    }

    /** The session shared by requests that come without one, initialized on first use. */
    private synchronized McpStreamableServerSession direct() {
        if (direct == null) {
            McpStreamableServerSession.McpStreamableServerSessionInit started =
                    sessionFactory.startSession(new McpSchema.InitializeRequest(
                            ProtocolVersions.MCP_2025_06_18,
                            McpSchema.ClientCapabilities.builder().build(),
                            new McpSchema.Implementation("direct-http", "1")));
            started.initResult().block();
            started.session()
                    .accept(new McpSchema.JSONRPCNotification(
                            McpSchema.JSONRPC_VERSION, McpSchema.METHOD_NOTIFICATION_INITIALIZED, null))
                    .block();
            direct = started.session();
        }
        return direct;
    }

    private static Object idOf(McpSchema.JSONRPCMessage message) {
        return message instanceof McpSchema.JSONRPCRequest call ? call.id() : null;
    }

    private static boolean accepts(String accept, String type) {
        return accept == null || accept.contains(type) || accept.contains("*/*");
    }

    private void error(HttpServletResponse response, int status, int code, String message, Object id)
            throws IOException {
        writeJson(response, status, JsonRpc.error(id, code, message));
    }

    private void writeJson(HttpServletResponse response, int status, Object body) throws IOException {
        JsonResponse.write(response, status, mapper.writeValueAsBytes(body));
    }

    @Override
    public Mono<Void> notifyClients(String method, Object params) {
        return Flux.fromIterable(List.copyOf(sessions.values()))
                .flatMap(session -> session.sendNotification(method, params).onErrorComplete())
                .then();
    }

    @Override
    public Mono<Void> notifyClient(String sessionId, String method, Object params) {
        McpStreamableServerSession session = sessions.get(sessionId);
        return session == null ? Mono.empty() : session.sendNotification(method, params);
    }

    /** Starts every task id and request state of protocol 2026-07-28 with {@code tag} (see StatelessServer). */
    void tagIds(String tag) {
        router.stateless().tagIds(tag);
    }

    /** Ends the subscription streams of protocol 2026-07-28, each with its listen request's result. */
    void endStreams() {
        router.stateless().endSubscriptions();
    }

    @Override
    public Mono<Void> closeGracefully() {
        closing = true;
        sweeper.shutdownNow();
        router.stateless().close();
        List<McpStreamableServerSession> open = new ArrayList<>(sessions.values());
        synchronized (this) {
            if (direct != null) {
                open.add(direct);
            }
        }
        sessions.clear();
        lastUsed.clear();
        return Flux.fromIterable(open)
                .flatMap(s -> s.closeGracefully().onErrorComplete())
                .then();
    }
}

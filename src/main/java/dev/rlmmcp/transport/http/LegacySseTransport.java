package dev.rlmmcp.transport.http;

import dev.rlmmcp.transport.InboundRouter;
import dev.rlmmcp.transport.ToolOffer;
import dev.rlmmcp.transport.jsonrpc.JsonRpc;
import dev.rlmmcp.transport.jsonrpc.ServedRequests;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpServerSession;
import io.modelcontextprotocol.spec.McpServerTransport;
import io.modelcontextprotocol.spec.McpServerTransportProvider;
import io.modelcontextprotocol.spec.ProtocolVersions;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The legacy HTTP+SSE transport (MCP 2024-11-05): {@code GET /sse} opens a stream whose first event
 * names the endpoint to POST to ({@code /message?session_id=...}); every answer, notification and
 * server request (sampling) comes back on the stream as a {@code message} event; a comment keeps an
 * idle stream alive. A POSTed request is answered 202 at once and served on its own virtual thread,
 * so a tool call waiting for the client's sampling answer never holds up the POST that carries it.
 * A POST whose body is not well-formed JSON-RPC, or whose params have the wrong shape, is refused
 * with 400 and a JSON-RPC error body; the rest goes to the {@link InboundRouter} (cancellations,
 * dispatch), and the answer to a cancelled request is not sent on the stream.
 */
final class LegacySseTransport extends HttpServlet implements McpServerTransportProvider {

    static final String SSE_PATH = "/sse";
    static final String MESSAGE_PATH = "/message";
    private static final Logger log = LoggerFactory.getLogger(LegacySseTransport.class);
    private static final byte[] KEEP_ALIVE = ": keep-alive\n\n".getBytes(StandardCharsets.UTF_8);

    private final transient McpJsonMapper mapper;
    private final int maxRequestBytes;
    private final transient Consumer<String> sessionEnded;
    private final transient Map<String, Stream> streams = new ConcurrentHashMap<>();
    private final transient InboundRouter router;
    private final transient ExecutorService calls = Executors.newVirtualThreadPerTaskExecutor();
    private final transient ScheduledExecutorService keepAlive;
    private transient McpServerSession.Factory sessionFactory;
    /** The cluster's record of where each stream is, or null on a single node. */
    private final transient McpSessionAdoption homes;

    private volatile boolean closing;

    LegacySseTransport(
            McpJsonMapper mapper,
            int maxRequestBytes,
            Duration keepAliveEvery,
            Consumer<String> sessionEnded,
            ToolOffer offer,
            McpSessionAdoption homes) {
        this.homes = homes;
        this.mapper = mapper;
        this.maxRequestBytes = maxRequestBytes;
        this.sessionEnded = sessionEnded;
        this.router = new InboundRouter(mapper, offer);
        this.keepAlive = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().daemon().name("sse-keepalive").factory());
        long ms = keepAliveEvery.toMillis();
        keepAlive.scheduleAtFixedRate(() -> streams.values().forEach(Stream::keepAlive), ms, ms, TimeUnit.MILLISECONDS);
    }

    @Override
    public void setSessionFactory(McpServerSession.Factory sessionFactory) {
        this.sessionFactory = sessionFactory;
    }

    @Override
    public List<String> protocolVersions() {
        return List.of(
                ProtocolVersions.MCP_2024_11_05,
                ProtocolVersions.MCP_2025_03_26,
                ProtocolVersions.MCP_2025_06_18,
                ProtocolVersions.MCP_2025_11_25);
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        if (!HttpEndpoint.path(request).equals(SSE_PATH)) {
            notAllowed(request, response, "POST");
            return;
        }
        if (closing) {
            JsonResponse.error(response, 503, McpSchema.ErrorCodes.INTERNAL_ERROR, "the server is shutting down");
            return;
        }
        EventStream.begin(response);
        AsyncContext async = request.startAsync();
        async.setTimeout(0);
        Stream stream = new Stream(async, response.getOutputStream());
        McpServerSession session = sessionFactory.create(stream);
        stream.session = session;
        streams.put(session.getId(), stream);
        if (homes != null) {
            homes.streamStarted(session.getId()); // so other nodes send its POST /message here
        }
        async.addListener(new AsyncListener() {
            @Override
            public void onComplete(AsyncEvent event) {
                stream.ended();
            }

            @Override
            public void onTimeout(AsyncEvent event) {
                stream.ended();
            }

            @Override
            public void onError(AsyncEvent event) {
                stream.ended();
            }

            @Override
            public void onStartAsync(AsyncEvent event) {}
        });
        stream.event("endpoint", MESSAGE_PATH + "?session_id=" + session.getId());
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
        if (!HttpEndpoint.path(request).equals(MESSAGE_PATH)) {
            notAllowed(request, response, "GET");
            return;
        }
        if (closing) {
            JsonResponse.refuseUnread(
                    request, response, 503, McpSchema.ErrorCodes.INTERNAL_ERROR, "the server is shutting down");
            return;
        }
        Stream stream = stream(request, response);
        if (stream == null) {
            return;
        }
        byte[] body = JsonResponse.readBody(request, response, maxRequestBytes);
        if (body == null) {
            return;
        }
        McpSchema.JSONRPCMessage message;
        try {
            message = router.parse(body);
        } catch (JsonRpc.Refused e) {
            // refused on the POST itself, which the client checks before it waits on the stream
            JsonResponse.write(response, 400, mapper.writeValueAsBytes(e.answer()));
            return;
        }
        router.dispatch(stream.session.getId(), message, served(stream.session), calls);
        response.setStatus(202);
    }

    /** How the router hands a message to the SDK session of one SSE stream: handled, and waited for. */
    private static InboundRouter.Session served(McpServerSession session) {
        return new InboundRouter.Session() {
            @Override
            public void call(McpSchema.JSONRPCRequest call, ServedRequests.Served served) {
                try {
                    served.carrying(session.handle(call)).block();
                } catch (RuntimeException e) {
                    log.warn("serving {} failed", call.method(), e);
                }
            }

            @Override
            public void accept(McpSchema.JSONRPCMessage notificationOrResponse) {
                try {
                    session.handle(notificationOrResponse).block();
                } catch (RuntimeException e) {
                    log.warn("handling {} failed", notificationOrResponse, e);
                }
            }
        };
    }

    /** The stream the POST's session_id names, or null after refusing a POST that names none that is open. */
    private Stream stream(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String id = request.getParameter("session_id");
        if (id == null) {
            id = request.getParameter("sessionId");
        }
        Stream stream = id == null ? null : streams.get(id);
        if (stream == null) {
            JsonResponse.refuseUnread(
                    request,
                    response,
                    id == null ? 400 : 404,
                    McpSchema.ErrorCodes.INVALID_REQUEST,
                    id == null
                            ? "missing session_id: open GET /sse first and POST to the endpoint it names"
                            : "no SSE session " + id + " (its stream closed): open GET /sse again");
        }
        return stream;
    }

    @Override
    protected void doDelete(HttpServletRequest request, HttpServletResponse response) throws IOException {
        notAllowed(request, response, HttpEndpoint.path(request).equals(SSE_PATH) ? "GET" : "POST");
    }

    @Override
    protected void doPut(HttpServletRequest request, HttpServletResponse response) throws IOException {
        notAllowed(request, response, HttpEndpoint.path(request).equals(SSE_PATH) ? "GET" : "POST");
    }

    private static void notAllowed(HttpServletRequest request, HttpServletResponse response, String allow)
            throws IOException {
        response.setHeader("Allow", allow);
        JsonResponse.refuseUnread(
                request, response, 405, McpSchema.ErrorCodes.INVALID_REQUEST, "use " + allow + " here");
    }

    @Override
    public Mono<Void> notifyClients(String method, Object params) {
        return Flux.fromIterable(List.copyOf(streams.values()))
                .flatMap(s -> s.session.sendNotification(method, params).onErrorComplete())
                .then();
    }

    @Override
    public Mono<Void> notifyClient(String sessionId, String method, Object params) {
        Stream stream = streams.get(sessionId);
        return stream == null ? Mono.empty() : stream.session.sendNotification(method, params);
    }

    /** Ends every stream (clients see the connection close) and refuses new ones. */
    @Override
    public Mono<Void> closeGracefully() {
        return Mono.fromRunnable(() -> {
            closing = true;
            keepAlive.shutdownNow();
            List.copyOf(streams.values()).forEach(Stream::complete);
            calls.shutdown();
        });
    }

    /** One open event stream and the MCP session it carries. */
    private final class Stream implements McpServerTransport {

        private final AsyncContext async;
        private final OutputStream out;
        private volatile McpServerSession session;
        private boolean ended;

        Stream(AsyncContext async, OutputStream out) {
            this.async = async;
            this.out = out;
        }

        synchronized void event(String type, String data) {
            write(("event: " + type + "\ndata: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
        }

        synchronized void keepAlive() {
            write(KEEP_ALIVE);
        }

        private void write(byte[] bytes) {
            if (ended) {
                return;
            }
            try {
                out.write(bytes);
                out.flush();
            } catch (IOException | RuntimeException e) {
                log.debug("SSE stream {} closed: {}", session == null ? "?" : session.getId(), e.toString());
                complete();
            }
        }

        @Override
        public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
            return Mono.fromRunnable(() -> {
                if (router.withheld(session.getId(), message)) {
                    return;
                }
                try {
                    event(
                            "message",
                            mapper.writeValueAsString(
                                    JsonRpc.withoutTraces(router.outgoing(session.getId(), message))));
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
        }

        @Override
        public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
            return mapper.convertValue(data, typeRef);
        }

        void complete() {
            try {
                async.complete();
            } catch (IllegalStateException alreadyDone) {
                // the container ended it first
            }
            ended();
        }

        void ended() {
            synchronized (this) {
                if (ended) {
                    return;
                }
                ended = true;
            }
            McpServerSession s = session;
            if (s != null && streams.remove(s.getId(), this)) {
                s.close();
                router.ended(s.getId());
                sessionEnded.accept(s.getId());
                if (homes != null) {
                    homes.ended(s.getId());
                }
            }
        }

        @Override
        public Mono<Void> closeGracefully() {
            return Mono.fromRunnable(this::complete);
        }

        @Override
        public void close() {
            complete();
        }
    }
}

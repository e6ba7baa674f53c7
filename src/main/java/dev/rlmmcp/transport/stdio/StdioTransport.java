package dev.rlmmcp.transport.stdio;

import dev.rlmmcp.transport.CallChannel;
import dev.rlmmcp.transport.HeapReturn;
import dev.rlmmcp.transport.InboundRouter;
import dev.rlmmcp.transport.ToolOffer;
import dev.rlmmcp.transport.jsonrpc.JsonRpc;
import dev.rlmmcp.transport.jsonrpc.ServedRequests;
import dev.rlmmcp.transport.stateless.Refusal;
import dev.rlmmcp.transport.stateless.StatelessServer;
import dev.rlmmcp.transport.stateless.StatelessTools;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpServerSession;
import io.modelcontextprotocol.spec.McpServerTransport;
import io.modelcontextprotocol.spec.McpServerTransportProvider;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import io.modelcontextprotocol.spec.McpStreamableServerTransportProvider;
import io.modelcontextprotocol.spec.ProtocolVersions;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * MCP over a byte stream pair, one JSON-RPC message per line, for the SDK's server session. It
 * replaces the SDK's stdio provider, which routes every message through two Reactor queues
 * (costing most of a call's latency) and was seen to stop answering under sustained sequential
 * load. Here the thread that reads a message hands the reading on to another thread and handles
 * the message itself (leader/follower), so a call's critical path has no thread hand-off, and a
 * long call never stops the next message (a cancellation, a sampling reply) from being read.
 * Each line goes to the {@link InboundRouter}, which refuses a malformed one (answered with a JSON-RPC
 * error instead of ending the session), acts on cancellations and chooses the revision; what is left here
 * is the framing, and holding the requests that need the start-up checks until they have passed.
 */
final class StdioTransport implements McpServerTransportProvider {

    private static final Logger log = LoggerFactory.getLogger(StdioTransport.class);
    private static final Duration DRAIN = Duration.ofSeconds(10);

    private final McpJsonMapper mapper;
    private final InputStream in;
    private final OutputStream out;
    private final CountDownLatch closed = new CountDownLatch(1);
    private final ExecutorService threads = Executors.newCachedThreadPool(
            Thread.ofPlatform().name("mcp-stdio-", 0).daemon().factory());
    private final LineReader lines;
    private volatile McpServerSession session;
    private volatile boolean closing;

    /** Every message's way in; requests of protocol 2026-07-28 name their version in their _meta. */
    private final InboundRouter router;

    private final ScheduledExecutorService sweeper = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon().name("mcp-stdio-sweeper").factory());

    /**
     * Messages are read and parsed on arrival; those {@link StartupMethods} names are handled at once, the
     * others once this completes (the start-up checks have passed). Completed exceptionally, the others are
     * refused with its message.
     */
    private final CompletableFuture<?> answerable;

    /** Answers a {@link StdioFront} gave before this transport read anything, and those kept for the next start. */
    private final StartupAnswers answers;
    /** The key of the answer to each request under way whose answer {@link #answers} keeps, by {@link StartupAnswers#idKey}. */
    private final Map<String, String> answerKeys = new ConcurrentHashMap<>();

    private final Handshake handshake = new Handshake();
    /**
     * Completed once the client has its tools, asked for something else, or left: what the start does in
     * the background waits for it (see {@link StdioEndpoint#listed}).
     */
    private final CompletableFuture<Void> listed = new CompletableFuture<>();
    /** Lines read so far; read by one lead at a time, each lead started by the one before. */
    private long linesRead;

    StdioTransport(
            McpJsonMapper mapper,
            InputStream in,
            OutputStream out,
            int maxMessageBytes,
            StatelessTools tools,
            ToolOffer offer,
            CompletableFuture<?> answerable,
            StartupAnswers answers) {
        this.answers = answers;
        this.answerable = answerable;
        this.mapper = mapper;
        this.in = in;
        this.out = out;
        this.lines = new LineReader(
                in, maxMessageBytes, () -> closing, tooLarge -> reject(McpSchema.ErrorCodes.INVALID_REQUEST, tooLarge));
        this.router = new InboundRouter(mapper, tools, this::protocolVersions, offer);
        sweeper.scheduleWithFixedDelay(router.stateless()::sweep, 1, 1, TimeUnit.MINUTES);
    }

    /** The protocol versions before 2026-07-28 this transport speaks; for any other the SDK settles on the last. */
    static final List<String> VERSIONS = List.of(
            ProtocolVersions.MCP_2024_11_05,
            ProtocolVersions.MCP_2025_03_26,
            ProtocolVersions.MCP_2025_06_18,
            ProtocolVersions.MCP_2025_11_25);

    @Override
    public List<String> protocolVersions() {
        return VERSIONS;
    }

    /**
     * The provider whose SDK sessions serve requests of protocol 2026-07-28 on this stream (an SDK server
     * of their own, built from the same tools: the SDK needs one per provider).
     */
    public McpStreamableServerTransportProvider statelessProvider() {
        return new McpStreamableServerTransportProvider() {
            @Override
            public void setSessionFactory(McpStreamableServerSession.Factory factory) {
                router.stateless().setSessionFactory(factory);
            }

            @Override
            public Mono<Void> notifyClients(String method, Object params) {
                return Mono.empty();
            }

            @Override
            public Mono<Void> closeGracefully() {
                return Mono.fromRunnable(StdioTransport.this::closeStateless);
            }
        };
    }

    private void closeStateless() {
        sweeper.shutdownNow();
        router.stateless().close();
    }

    @Override
    public void setSessionFactory(McpServerSession.Factory factory) {
        session = factory.create(new LineTransport());
        threads.execute(this::lead);
    }

    /**
     * Blocks until the client closes its end (EOF on our input), then gives the calls still running
     * a bounded time to finish and write their replies.
     */
    public void awaitClosed() throws InterruptedException {
        closed.await();
        if (!threads.awaitTermination(DRAIN.toMillis(), TimeUnit.MILLISECONDS)) {
            log.warn("stdin closed with calls still running; not waiting for them longer than {}", DRAIN);
        }
        closing = true;
        closeStateless();
        session.close();
    }

    /** Reads the next message, passes the reading on, then handles the message on this thread. */
    private void lead() {
        LineReader.Line message;
        try {
            message = lines.next();
        } catch (IOException e) {
            if (!closing) {
                log.warn("stdin failed: {}", e.toString());
            }
            message = null;
        }
        if (message == null) {
            listed.complete(null);
            threads.shutdown();
            closed.countDown();
            return;
        }
        long line = linesRead++;
        threads.execute(this::lead);
        dispatch(message, line);
    }

    private void dispatch(LineReader.Line json, long line) {
        try (HeapReturn.Scope scope = HeapReturn.handling(json.length())) {
            dispatchParsed(json, line);
        }
    }

    private void dispatchParsed(LineReader.Line json, long line) {
        McpSchema.JSONRPCMessage message = null;
        try {
            message = router.parse(json.bytes(), json.offset(), json.length());
        } catch (JsonRpc.Refused e) {
            if (e.answerable()) {
                write(e.answer());
            } else {
                log.warn("ignored a malformed notification or response: {}", e.getMessage());
            }
            return;
        } finally {
            handshake.parsed(line, message); // the lines behind it may wait for it, parsed or not
        }
        if (message instanceof McpSchema.JSONRPCRequest asked) {
            String key = StartupAnswers.key(asked.method(), asked.params());
            if (key != null) {
                answerKeys.put(StartupAnswers.idKey(asked.id()), key);
            }
        }
        if (!StartupMethods.answeredAtOnce(message)) {
            listed.complete(null); // the client works now: the checks it waits for begin
            if (refusedUntilReady(message)) {
                return;
            }
        }
        String connection = session.getId();
        try {
            if (router.isStateless(null, message)) {
                // a call without session_id uses the default REPL session of this stream's earlier-revision calls
                router.dispatchStateless(connection, connection, null, message, statelessAnswers);
            } else {
                toSession(connection, message, line);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (message instanceof McpSchema.JSONRPCRequest asked && McpSchema.METHOD_TOOLS_LIST.equals(asked.method())) {
            listed.complete(null);
        }
    }

    /** Completes once the client has listed the tools (answered), asked for anything else, or closed stdin. */
    CompletableFuture<Void> listed() {
        return listed;
    }

    /** A message of the 2025 revisions, for the SDK's session once the stream's handshake lets it through. */
    private void toSession(String connection, McpSchema.JSONRPCMessage message, long line) throws IOException {
        switch (handshake.admit(line, message)) {
            case PASS -> router.dispatch(connection, message, sessionCalls);
            case INITIALIZED_FIRST -> {
                sessionCalls.accept(new McpSchema.JSONRPCNotification(
                        McpSchema.JSONRPC_VERSION, McpSchema.METHOD_NOTIFICATION_INITIALIZED, null));
                router.dispatch(connection, message, sessionCalls);
            }
            case PONG ->
                send(new McpSchema.JSONRPCResponse(
                        McpSchema.JSONRPC_VERSION, ((McpSchema.JSONRPCRequest) message).id(), Map.of(), null));
            case REFUSE -> {
                McpSchema.JSONRPCRequest request = (McpSchema.JSONRPCRequest) message;
                send(new McpSchema.JSONRPCResponse(
                        McpSchema.JSONRPC_VERSION,
                        request.id(),
                        null,
                        new McpSchema.JSONRPCResponse.JSONRPCError(
                                McpSchema.ErrorCodes.INVALID_REQUEST, Handshake.refusal(request.method()), null)));
            }
        }
    }

    /** Whether the message was answered (or, a notification, dropped) because the server will never be ready. */
    private boolean refusedUntilReady(McpSchema.JSONRPCMessage message) {
        String unavailable = unavailable();
        if (unavailable != null && message instanceof McpSchema.JSONRPCRequest request) {
            write(JsonRpc.error(request.id(), McpSchema.ErrorCodes.INTERNAL_ERROR, unavailable));
        }
        return unavailable != null;
    }

    /** Messages of the 2025 revisions, for the stream's SDK session, handled on the reading thread. */
    private final InboundRouter.Session sessionCalls = new InboundRouter.Session() {
        @Override
        public void call(McpSchema.JSONRPCRequest call, ServedRequests.Served served) {
            handle(call, served.carrying(session.handle(call)));
        }

        @Override
        public void accept(McpSchema.JSONRPCMessage message) {
            handle(message, session.handle(message));
        }
    };

    /** Requests of protocol 2026-07-28, answered as lines on the stream (see {@link StatelessServer}). */
    private final InboundRouter.Stateless statelessAnswers = new InboundRouter.Stateless() {
        @Override
        public void refuse(Refusal refusal, Object id) {
            write(refusal.answer(id));
        }

        @Override
        public CallChannel channel(McpSchema.JSONRPCRequest call, ServedRequests.Served served) {
            return new LineChannel(call, served);
        }

        @Override
        public void failed(McpSchema.JSONRPCRequest call, RuntimeException e) {
            if (JsonRpc.protocolError(e) == null) {
                log.warn("handling {} failed", call, e);
            }
            write(JsonRpc.withoutTraces(McpSchema.JSONRPCResponse.error(call.id(), JsonRpc.failure(e))));
        }
    };

    /** Handles a message on this thread; a request's context goes with it in {@code handling}. */
    private static void handle(McpSchema.JSONRPCMessage message, Mono<Void> handling) {
        try {
            handling.block();
        } catch (RuntimeException e) {
            log.warn("handling {} failed: {}", message, e.toString());
        }
    }

    /** An error for a line that has no usable id: JSON-RPC answers those with a null id. */
    private void reject(int code, String message) {
        write(JsonRpc.error(null, code, message));
    }

    /**
     * Waits until the rest of the server is ready; null then, else why it never will be (a failed
     * start-up check), which every request that needs it is answered with.
     */
    private String unavailable() {
        try {
            answerable.join();
            return null;
        } catch (CompletionException | CancellationException e) {
            Throwable why = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            return why.getMessage();
        }
    }

    /**
     * A message of the SDK's: an answer the front gave already is not sent again (see {@link StartupAnswers}),
     * and one whose answer is kept for the next start is kept.
     */
    private void send(McpSchema.JSONRPCMessage message) {
        if (!(message instanceof McpSchema.JSONRPCResponse answer) || answer.id() == null) {
            write(message);
            return;
        }
        // the client's initialize was handled by now: its tools/list answer is the one for what it declared
        String key = StartupAnswers.forClient(
                answerKeys.remove(StartupAnswers.idKey(answer.id())),
                router.offer().samples(session.getId()));
        String kept = answer.error() == null ? key : null;
        byte[] json = bytes(message);
        if (answers.serverAnswered(
                answer.id(),
                kept,
                json,
                () -> bytes(new McpSchema.JSONRPCResponse(
                        answer.jsonrpc(), StartupAnswers.keptId(), answer.result(), null)))) {
            writeBytes(json);
        }
        if (kept != null) {
            answers.saveLater();
        }
    }

    private void write(Object message) {
        writeBytes(bytes(message));
    }

    private byte[] bytes(Object message) {
        try {
            return mapper.writeValueAsBytes(message);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void writeBytes(byte[] json) {
        try {
            synchronized (out) {
                out.write(json);
                out.write('\n');
                out.flush();
            }
        } catch (IOException e) {
            if (!closing) {
                throw new UncheckedIOException(e);
            }
        }
    }

    @Override
    public Mono<Void> notifyClients(String method, Object params) {
        McpServerSession s = session;
        return s == null ? Mono.empty() : s.sendNotification(method, params);
    }

    @Override
    public Mono<Void> closeGracefully() {
        closing = true;
        McpServerSession s = session;
        return s == null ? Mono.empty() : s.closeGracefully();
    }

    /** What a request of protocol 2026-07-28 sends back: lines on the stream, dressed for the revision. */
    private final class LineChannel extends CallChannel {

        LineChannel(McpSchema.JSONRPCRequest call, ServedRequests.Served served) {
            super(mapper, served, router.stateless().outgoing(call));
        }

        @Override
        protected void write(McpSchema.JSONRPCMessage message) {
            StdioTransport.this.send(JsonRpc.withoutTraces(message));
        }

        /** The stream's own lines: every subscription shares them, told apart by its subscription id. */
        @Override
        public StatelessServer.Sink stream() {
            return new StatelessServer.Sink() {
                @Override
                public boolean send(McpSchema.JSONRPCMessage message) {
                    write(JsonRpc.withoutTraces(message));
                    return !closing;
                }

                @Override
                public void close() {}
            };
        }
    }

    private final class LineTransport implements McpServerTransport {

        /** The answer to a request the client cancelled is not sent, as the MCP specification asks. */
        @Override
        public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
            return Mono.fromRunnable(() -> {
                handshake.sent(message);
                if (!router.withheld(session.getId(), message)) {
                    send(JsonRpc.withoutTraces(router.outgoing(session.getId(), message)));
                }
            });
        }

        @Override
        public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
            return mapper.convertValue(data, typeRef);
        }

        @Override
        public Mono<Void> closeGracefully() {
            closing = true;
            return Mono.empty();
        }
    }
}

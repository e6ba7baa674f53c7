package dev.rlmmcp.face;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpServerSession;
import io.modelcontextprotocol.spec.McpServerTransport;
import io.modelcontextprotocol.spec.McpServerTransportProvider;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
 * A malformed line is answered with a parse error instead of ending the session.
 */
public final class StdioTransport implements McpServerTransportProvider {

    private static final Logger log = LoggerFactory.getLogger(StdioTransport.class);
    private static final Duration DRAIN = Duration.ofSeconds(10);
    private static final TypeRef<Map<String, Object>> MESSAGE = new TypeRef<>() {
    };

    private final McpJsonMapper mapper;
    private final InputStream in;
    private final OutputStream out;
    private final int maxMessageBytes;
    private final CountDownLatch closed = new CountDownLatch(1);
    private final ExecutorService threads = Executors.newCachedThreadPool(
            Thread.ofPlatform().name("mcp-stdio-", 0).daemon().factory());
    private final byte[] buffer = new byte[1 << 16];
    private final ByteArrayOutputStream line = new ByteArrayOutputStream(8192);
    private int position;
    private int limit;
    private volatile McpServerSession session;
    private volatile boolean closing;

    public StdioTransport(McpJsonMapper mapper, InputStream in, OutputStream out, int maxMessageBytes) {
        this.mapper = mapper;
        this.in = in;
        this.out = out;
        this.maxMessageBytes = maxMessageBytes;
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
        session.close();
    }

    /** Reads the next message, passes the reading on, then handles the message on this thread. */
    private void lead() {
        byte[] message;
        try {
            message = nextMessage();
        } catch (IOException e) {
            if (!closing) {
                log.warn("stdin failed: {}", e.toString());
            }
            message = null;
        }
        if (message == null) {
            threads.shutdown();
            closed.countDown();
            return;
        }
        threads.execute(this::lead);
        dispatch(message);
    }

    /**
     * The next non-empty line, or null at end of input. Only the current leader calls this; the
     * hand-off through the executor orders one leader's reads before the next one's.
     */
    private byte[] nextMessage() throws IOException {
        boolean oversize = false;
        while (!closing) {
            if (position == limit) {
                limit = in.read(buffer);
                position = 0;
                if (limit < 0) {
                    limit = 0;
                    return null;
                }
            }
            int start = position;
            while (position < limit && buffer[position] != '\n') {
                position++;
            }
            int length = position - start;
            if (line.size() + (long) length > maxMessageBytes) {
                line.reset();
                oversize = true;
            } else if (!oversize) {
                line.write(buffer, start, length);
            }
            if (position == limit) {
                continue;
            }
            position++;
            if (oversize) {
                reject(McpSchema.ErrorCodes.INVALID_REQUEST, "message larger than the limit of " + maxMessageBytes
                        + " bytes (raise --max-request-mb / RLM_MAX_REQUEST_MB)");
                oversize = false;
            } else if (line.size() > 0) {
                byte[] bytes = line.toByteArray();
                line.reset();
                if (!isBlank(bytes)) {
                    return bytes;
                }
            }
        }
        return null;
    }

    private static boolean isBlank(byte[] bytes) {
        for (byte b : bytes) {
            if (b != ' ' && b != '\t' && b != '\r') {
                return false;
            }
        }
        return true;
    }

    /** Like McpSchema.deserializeJsonRpcMessage, but from bytes: no copy of a large message into a String first. */
    private McpSchema.JSONRPCMessage parse(byte[] json) throws IOException {
        Map<String, Object> map = mapper.readValue(json, MESSAGE);
        if (map.containsKey("method")) {
            return map.containsKey("id") ? mapper.convertValue(map, McpSchema.JSONRPCRequest.class)
                    : mapper.convertValue(map, McpSchema.JSONRPCNotification.class);
        }
        if (map.containsKey("result") || map.containsKey("error")) {
            return mapper.convertValue(map, McpSchema.JSONRPCResponse.class);
        }
        throw new IOException("neither a request, a notification nor a response");
    }

    private void dispatch(byte[] json) {
        McpSchema.JSONRPCMessage message;
        try {
            message = parse(json);
        } catch (IOException | RuntimeException e) {
            reject(McpSchema.ErrorCodes.PARSE_ERROR, "not a JSON-RPC message: " + e.getMessage());
            return;
        }
        try {
            session.handle(message).block();
        } catch (RuntimeException e) {
            log.warn("handling {} failed: {}", message, e.toString());
        }
    }

    /** An error for a line that has no usable id: JSON-RPC answers those with a null id. */
    private void reject(int code, String message) {
        Map<String, Object> response = new LinkedHashMap<>();
        response.put("jsonrpc", McpSchema.JSONRPC_VERSION);
        response.put("id", null);
        response.put("error", Map.of("code", code, "message", message));
        write(response);
    }

    private void write(Object message) {
        try {
            byte[] json = mapper.writeValueAsBytes(message);
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

    private final class LineTransport implements McpServerTransport {

        @Override
        public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
            return Mono.fromRunnable(() -> write(message));
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

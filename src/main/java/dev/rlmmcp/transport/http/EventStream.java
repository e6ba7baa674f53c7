package dev.rlmmcp.transport.http;

import dev.rlmmcp.transport.jsonrpc.JsonRpc;
import dev.rlmmcp.transport.stateless.StatelessServer;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A long-lived event stream on an HTTP response, held without a thread (asynchronous servlet): each
 * message an event, and a comment every {@link #KEEP_ALIVE_SECONDS} seconds, which finds a client gone.
 */
final class EventStream implements StatelessServer.Sink, AsyncListener {

    static final long KEEP_ALIVE_SECONDS = 15;
    private static final byte[] KEEP_ALIVE = ": keep-alive\n\n".getBytes(StandardCharsets.UTF_8);

    private final McpJsonMapper mapper;
    private final AsyncContext async;
    private final OutputStream out;
    private final ScheduledFuture<?> keepAlive;
    private boolean ended;

    private EventStream(McpJsonMapper mapper, AsyncContext async, OutputStream out, ScheduledExecutorService timer) {
        this.mapper = mapper;
        this.async = async;
        this.out = out;
        this.keepAlive = timer.scheduleAtFixedRate(
                () -> write(KEEP_ALIVE), KEEP_ALIVE_SECONDS, KEEP_ALIVE_SECONDS, TimeUnit.SECONDS);
    }

    /** Turns {@code response} into an event stream that stays open after the servlet returns. */
    static EventStream open(
            HttpServletRequest request,
            HttpServletResponse response,
            McpJsonMapper mapper,
            ScheduledExecutorService timer)
            throws IOException {
        begin(response);
        AsyncContext async = request.startAsync();
        async.setTimeout(0);
        EventStream stream = new EventStream(mapper, async, response.getOutputStream(), timer);
        async.addListener(stream);
        return stream;
    }

    /** The status and headers of an event stream that no cache or proxy holds back. */
    static void begin(HttpServletResponse response) {
        response.setStatus(200);
        response.setContentType("text/event-stream");
        response.setCharacterEncoding("UTF-8");
        response.setHeader("Cache-Control", "no-cache");
        response.setHeader("X-Accel-Buffering", "no");
    }

    @Override
    public boolean send(McpSchema.JSONRPCMessage message) {
        try {
            return write(("event: message\ndata: " + mapper.writeValueAsString(JsonRpc.withoutTraces(message)) + "\n\n")
                    .getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            close();
            return false;
        }
    }

    private synchronized boolean write(byte[] bytes) {
        if (ended) {
            return false;
        }
        try {
            out.write(bytes);
            out.flush();
            return true;
        } catch (IOException | RuntimeException e) {
            close();
            return false;
        }
    }

    @Override
    public void close() {
        try {
            async.complete();
        } catch (IllegalStateException alreadyDone) {
            // the container ended it first
        }
        ended();
    }

    private synchronized void ended() {
        ended = true;
        keepAlive.cancel(false);
    }

    @Override
    public void onComplete(AsyncEvent event) {
        ended();
    }

    @Override
    public void onTimeout(AsyncEvent event) {
        ended();
    }

    @Override
    public void onError(AsyncEvent event) {
        ended();
    }

    @Override
    public void onStartAsync(AsyncEvent event) {}
}

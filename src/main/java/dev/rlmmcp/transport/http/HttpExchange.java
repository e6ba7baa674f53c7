package dev.rlmmcp.transport.http;

import dev.rlmmcp.transport.CallChannel;
import dev.rlmmcp.transport.jsonrpc.JsonRpc;
import dev.rlmmcp.transport.jsonrpc.ServedRequests;
import dev.rlmmcp.transport.stateless.StatelessServer;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.ToIntFunction;
import java.util.function.UnaryOperator;

/**
 * The answer to one POSTed request: JSON if the response is the first thing the session sends,
 * an SSE stream from the first message that comes before it.
 */
final class HttpExchange extends CallChannel {

    private final McpJsonMapper mapper;
    private final ScheduledExecutorService timer;
    private final HttpServletRequest httpRequest;
    private final HttpServletResponse response;
    private final boolean json;
    private final boolean sse;
    /** The HTTP status of the answer: 200, but the stateless revision has statuses of its own. */
    private final ToIntFunction<McpSchema.JSONRPCResponse> status;

    private OutputStream stream;

    HttpExchange(
            McpJsonMapper mapper,
            ScheduledExecutorService timer,
            HttpServletRequest httpRequest,
            HttpServletResponse response,
            StreamableHttpTransport.Accepted accepted,
            ServedRequests.Served request,
            UnaryOperator<McpSchema.JSONRPCMessage> outgoing,
            ToIntFunction<McpSchema.JSONRPCResponse> status) {
        super(mapper, request, outgoing);
        this.mapper = mapper;
        this.timer = timer;
        this.httpRequest = httpRequest;
        this.response = response;
        this.json = accepted.json();
        this.sse = accepted.sse();
        this.status = status;
    }

    /** The response as a long-lived event stream, if the client accepts one. */
    @Override
    public StatelessServer.Sink stream() {
        if (!sse) {
            return null;
        }
        try {
            return EventStream.open(httpRequest, response, mapper, timer);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A withheld answer: the POST still gets its status, if nothing went out before. */
    @Override
    protected synchronized void withheld() {
        if (stream == null) {
            response.setStatus(202);
        }
    }

    @Override
    protected synchronized void write(McpSchema.JSONRPCMessage message) {
        if (!sse && message instanceof McpSchema.JSONRPCRequest request) {
            // answered at once rather than left waiting for a reply the client can never send
            throw new IllegalStateException("cannot send " + request.method() + " to this client during this "
                    + "call: its Accept header allows only application/json; a request to the client needs "
                    + "text/event-stream");
        }
        try {
            if (stream == null
                    && message instanceof McpSchema.JSONRPCResponse
                    && context().notServing()) {
                // refused before anything ran: the 503 a balancer or forwarding node sends on
                RoutingFilter.notServingHeaders(response);
                JsonResponse.write(response, 503, mapper.writeValueAsBytes(JsonRpc.withoutTraces(message)));
                return;
            }
            if (stream == null && json && (message instanceof McpSchema.JSONRPCResponse || !sse)) {
                if (message instanceof McpSchema.JSONRPCResponse answer) {
                    JsonResponse.write(
                            response,
                            status.applyAsInt(answer),
                            mapper.writeValueAsBytes(JsonRpc.withoutTraces(message)));
                }
                return;
            }
            if (stream == null) {
                response.setStatus(200);
                response.setContentType("text/event-stream");
                response.setCharacterEncoding("UTF-8");
                response.setHeader("Cache-Control", "no-cache");
                stream = response.getOutputStream();
            }
            stream.write("event: message\ndata: ".getBytes(StandardCharsets.UTF_8));
            stream.write(mapper.writeValueAsBytes(JsonRpc.withoutTraces(message)));
            stream.write("\n\n".getBytes(StandardCharsets.UTF_8));
            stream.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

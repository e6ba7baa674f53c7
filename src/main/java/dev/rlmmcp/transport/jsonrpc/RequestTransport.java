package dev.rlmmcp.transport.jsonrpc;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpStreamableServerTransport;
import reactor.core.publisher.Mono;

/** The SDK's transport for what it sends while serving one request: each message handed to {@link #deliver}. */
public abstract class RequestTransport implements McpStreamableServerTransport {

    private final McpJsonMapper mapper;

    public RequestTransport(McpJsonMapper mapper) {
        this.mapper = mapper;
    }

    /** A message the SDK sends for the request (its answer last), on the SDK's thread. */
    protected abstract void deliver(McpSchema.JSONRPCMessage message);

    @Override
    public final Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
        return Mono.fromRunnable(() -> deliver(message));
    }

    @Override
    public final Mono<Void> sendMessage(McpSchema.JSONRPCMessage message, String messageId) {
        return sendMessage(message);
    }

    @Override
    public final <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
        return mapper.convertValue(data, typeRef);
    }

    @Override
    public Mono<Void> closeGracefully() {
        return Mono.empty();
    }
}

package dev.rlmmcp.bridge.sdk;

import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import reactor.core.publisher.Mono;

/**
 * The SDK's stdio client transport, made safe for concurrent calls and single use. Its sendMessage
 * emits into a Reactor sink that refuses a second thread emitting at the same time ("Failed to
 * enqueue message"), which concurrent tool calls (or a call racing a notification's answer) hit;
 * here sends are serialised. And a client whose connection ended reconnects on its next request,
 * starting a new server process nobody would stop: here a transport connects once only.
 */
final class SerialStdioTransport extends StdioClientTransport {

    private final AtomicBoolean connected = new AtomicBoolean();

    SerialStdioTransport(ServerParameters parameters, McpJsonMapper mapper) {
        super(parameters, mapper);
    }

    @Override
    public Mono<Void> connect(Function<Mono<McpSchema.JSONRPCMessage>, Mono<McpSchema.JSONRPCMessage>> handler) {
        if (!connected.compareAndSet(false, true)) {
            return Mono.error(
                    new IllegalStateException("this MCP server connection has ended; a new client starts it again"));
        }
        return super.connect(handler);
    }

    @Override
    public synchronized Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
        return super.sendMessage(message);
    }
}

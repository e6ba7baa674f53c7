package dev.rlmmcp.transport;

import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.transport.jsonrpc.RequestTransport;
import dev.rlmmcp.transport.jsonrpc.ServedRequests;
import dev.rlmmcp.transport.stateless.StatelessServer;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import java.util.function.UnaryOperator;

/**
 * The way out for what the SDK sends while serving one request, whichever revision it is of: the answer to
 * a request its client cancelled is withheld, a message of the stateless revision is dressed for it, and
 * the rest is the transport's to frame ({@link #write}).
 */
public abstract class CallChannel extends RequestTransport implements StatelessServer.Channel {

    private final ServedRequests.Served served;
    private final UnaryOperator<McpSchema.JSONRPCMessage> outgoing;

    /** {@code outgoing}: how the request's revision sends a message (null: not at all). */
    public CallChannel(
            McpJsonMapper mapper, ServedRequests.Served served, UnaryOperator<McpSchema.JSONRPCMessage> outgoing) {
        super(mapper);
        this.served = served;
        this.outgoing = outgoing;
    }

    /** The context of the request being served. */
    protected final CallContext context() {
        return served.context();
    }

    /** Writes a message that is to go out, in the transport's framing. */
    protected abstract void write(McpSchema.JSONRPCMessage message);

    /** Hears that the answer was withheld (HTTP still owes the POST a status). */
    protected void withheld() {}

    @Override
    protected final void deliver(McpSchema.JSONRPCMessage message) {
        send(message);
    }

    @Override
    public final void send(McpSchema.JSONRPCMessage message) {
        if (served.withholds(message)) {
            withheld();
            return;
        }
        McpSchema.JSONRPCMessage out = outgoing.apply(message);
        if (out != null) {
            write(out);
        }
    }

    /** Serves the call; {@code connection} names whose default REPL session it uses (null: the MCP session's). */
    @Override
    public final void answer(McpStreamableServerSession session, McpSchema.JSONRPCRequest call, String connection) {
        served.carrying(session.responseStream(call, this), connection).block();
    }
}

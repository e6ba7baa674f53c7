package dev.rlmmcp.transport.jsonrpc;

import io.modelcontextprotocol.spec.McpSchema;
import java.util.Map;

/** A client's notifications/cancelled, which the SDK has no handler for, taken to the {@link ServedRequests} of its transport. */
public final class ClientCancellation {

    private static final String METHOD = "notifications/cancelled";

    private ClientCancellation() {}

    /** Whether {@code message} is a cancellation (then it has been acted on and is not for the SDK). */
    public static boolean handled(ServedRequests served, String connection, McpSchema.JSONRPCMessage message) {
        if (!(message instanceof McpSchema.JSONRPCNotification notification) || !METHOD.equals(notification.method())) {
            return false;
        }
        if (notification.params() instanceof Map<?, ?> params && params.get("requestId") != null) {
            served.cancel(connection, params.get("requestId"));
        }
        return true;
    }
}

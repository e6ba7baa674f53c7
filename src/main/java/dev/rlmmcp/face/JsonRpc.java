package dev.rlmmcp.face;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/** JSON-RPC framing shared by the transports: reading a message from bytes, and error answers. */
final class JsonRpc {

    private static final TypeRef<Map<String, Object>> OBJECT = new TypeRef<>() {
    };

    private JsonRpc() {
    }

    /** Messages from this size on have their long strings decoded by {@link LargeStrings}. */
    private static final int LARGE_MESSAGE = 1 << 20;

    static McpSchema.JSONRPCMessage parse(McpJsonMapper mapper, byte[] json) throws IOException {
        return parse(mapper, json, 0, json.length);
    }

    /**
     * Like McpSchema.deserializeJsonRpcMessage, but from bytes (a large message is not copied into
     * a String first), and with the long strings of a large message decoded by {@link LargeStrings}.
     */
    static McpSchema.JSONRPCMessage parse(McpJsonMapper mapper, byte[] bytes, int offset, int length)
            throws IOException {
        Map<String, Object> map = null;
        if (length >= LARGE_MESSAGE) {
            LargeStrings lifted = LargeStrings.lift(new String(bytes, offset, length, StandardCharsets.UTF_8));
            if (lifted != null) {
                map = mapper.readValue(lifted.json(), OBJECT);
                lifted.restore(map);
            }
        }
        if (map == null) {
            byte[] json = offset == 0 && length == bytes.length ? bytes
                    : Arrays.copyOfRange(bytes, offset, offset + length);
            map = mapper.readValue(json, OBJECT);
        }
        if (map.containsKey("method")) {
            return map.containsKey("id") ? mapper.convertValue(map, McpSchema.JSONRPCRequest.class)
                    : mapper.convertValue(map, McpSchema.JSONRPCNotification.class);
        }
        if (map.containsKey("result") || map.containsKey("error")) {
            return mapper.convertValue(map, McpSchema.JSONRPCResponse.class);
        }
        throw new IOException("neither a request, a notification nor a response");
    }

    /** An error answer; unlike the SDK's response record it allows the null id JSON-RPC uses for unreadable requests. */
    static Map<String, Object> error(Object id, int code, String message) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("jsonrpc", McpSchema.JSONRPC_VERSION);
        body.put("id", id);
        body.put("error", Map.of("code", code, "message", message));
        return body;
    }

    /**
     * The message as sent to a client: the SDK puts the messages of a whole exception chain into an
     * error's data; clients get the code and message only.
     */
    static McpSchema.JSONRPCMessage withoutTraces(McpSchema.JSONRPCMessage message) {
        if (message instanceof McpSchema.JSONRPCResponse response && response.error() != null
                && response.error().data() != null) {
            return McpSchema.JSONRPCResponse.error(response.id(), new McpSchema.JSONRPCResponse.JSONRPCError(
                    response.error().code(), response.error().message(), null));
        }
        return message;
    }

    /** A parser's complaint in one line, without Jackson's source excerpt. */
    static String brief(Exception e) {
        String message = String.valueOf(e.getMessage());
        int cut = message.indexOf("\n");
        message = cut < 0 ? message : message.substring(0, cut);
        return message.length() > 200 ? message.substring(0, 200) + "..." : message;
    }

    /** Why a request's params cannot be right (MCP params are always an object), or null if they may be. */
    static String badParams(McpSchema.JSONRPCMessage message) {
        if (message instanceof McpSchema.JSONRPCRequest request && request.params() != null
                && !(request.params() instanceof Map<?, ?>)) {
            return "params of " + request.method() + " must be a JSON object";
        }
        return null;
    }
}

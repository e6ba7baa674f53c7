package dev.rlmmcp.transport.stateless;

import dev.rlmmcp.transport.jsonrpc.JsonRpc;
import java.util.LinkedHashMap;
import java.util.Map;

/** A request refused before it is served: the HTTP status (where there is one), and the JSON-RPC error. */
public record Refusal(int status, int code, String message, Object data) {

    /** The JSON-RPC error answer to the request with this id. */
    public Map<String, Object> answer(Object id) {
        Map<String, Object> body = JsonRpc.error(id, code, message);
        if (data != null) {
            Map<String, Object> error = new LinkedHashMap<>(Map.of("code", code, "message", message));
            error.put("data", data);
            body.put("error", error);
        }
        return body;
    }
}

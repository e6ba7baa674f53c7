package dev.rlmmcp.transport;

import dev.rlmmcp.transport.jsonrpc.JsonRpc;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;

/**
 * The SDK's JSON mapper, with conversion failures turned into JSON-RPC invalid-params errors that name
 * the field. The SDK converts every request's params with {@link #convertValue}; a value of the wrong
 * JSON type there (one the transports' own envelope check does not know, e.g. {@code prompts/get} with
 * string arguments) would otherwise be answered -32603 with Jackson's text.
 */
final class ProtocolMapper implements McpJsonMapper {

    private final McpJsonMapper json;

    ProtocolMapper(McpJsonMapper json) {
        this.json = json;
    }

    @Override
    public <T> T convertValue(Object from, Class<T> type) {
        try {
            return json.convertValue(from, type);
        } catch (IllegalArgumentException e) {
            throw invalid(e);
        }
    }

    @Override
    public <T> T convertValue(Object from, TypeRef<T> type) {
        try {
            return json.convertValue(from, type);
        } catch (IllegalArgumentException e) {
            throw invalid(e);
        }
    }

    private static McpError invalid(IllegalArgumentException e) {
        return new McpError(new McpSchema.JSONRPCResponse.JSONRPCError(
                McpSchema.ErrorCodes.INVALID_PARAMS, JsonRpc.mismatch(e), null));
    }

    @Override
    public <T> T readValue(String content, Class<T> type) throws IOException {
        return json.readValue(content, type);
    }

    @Override
    public <T> T readValue(byte[] content, Class<T> type) throws IOException {
        return json.readValue(content, type);
    }

    @Override
    public <T> T readValue(String content, TypeRef<T> type) throws IOException {
        return json.readValue(content, type);
    }

    @Override
    public <T> T readValue(byte[] content, TypeRef<T> type) throws IOException {
        return json.readValue(content, type);
    }

    @Override
    public String writeValueAsString(Object value) throws IOException {
        return json.writeValueAsString(value);
    }

    @Override
    public byte[] writeValueAsBytes(Object value) throws IOException {
        return json.writeValueAsBytes(value);
    }
}

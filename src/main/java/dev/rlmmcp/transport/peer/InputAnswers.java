package dev.rlmmcp.transport.peer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.Map;

/** The answers to an input_required round, each asked of this call's own client. */
final class InputAnswers {

    private InputAnswers() {}

    /** Asks the client every input request of the round (by key); returns the answers by the same keys. */
    static ObjectNode ask(McpSyncServerExchange exchange, JsonNode requests, McpJsonMapper mapper, ObjectMapper json) {
        ObjectNode answers = json.createObjectNode();
        for (Map.Entry<String, JsonNode> asked : requests.properties()) {
            String method = asked.getValue().path("method").asText();
            Map<?, ?> params = json.convertValue(asked.getValue().path("params"), Map.class);
            Object answer = switch (method) {
                case McpSchema.METHOD_SAMPLING_CREATE_MESSAGE ->
                    exchange.createMessage(mapper.convertValue(params, McpSchema.CreateMessageRequest.class));
                case McpSchema.METHOD_ROOTS_LIST -> exchange.listRoots();
                default ->
                    throw new McpError(new McpSchema.JSONRPCResponse.JSONRPCError(
                            McpSchema.ErrorCodes.INTERNAL_ERROR,
                            "the node running this call asked the client " + method + ", which this node cannot relay",
                            null));
            };
            answers.set(asked.getKey(), json.valueToTree(mapper.convertValue(answer, Map.class)));
        }
        return answers;
    }
}

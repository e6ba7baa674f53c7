package dev.rlmmcp.e2e.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

/** What both clients share: JSON, one HTTP client, and reading an answer sent as JSON or as an event stream. */
final class Rpc {

    static final ObjectMapper JSON = new ObjectMapper();

    private Rpc() {}

    static HttpClient http() {
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10))
                .build();
    }

    /** A JSON-RPC request. */
    static ObjectNode request(long id, String method, ObjectNode params) {
        ObjectNode message =
                JSON.createObjectNode().put("jsonrpc", "2.0").put("id", id).put("method", method);
        message.set("params", params);
        return message;
    }

    /** tools/call params with these arguments and response_format json. */
    static ObjectNode toolCall(String tool, Map<String, ?> arguments) {
        ObjectNode params = JSON.createObjectNode().put("name", tool);
        ObjectNode args = params.putObject("arguments");
        args.setAll((ObjectNode) JSON.valueToTree(arguments));
        args.put("response_format", "json");
        return params;
    }

    /** The JSON-RPC response with this id: the body itself, or the matching event of an event stream. */
    static JsonNode response(HttpResponse<String> reply, long id, String what) throws IOException {
        if (reply.statusCode() != 200) {
            throw new CallFailed(what + " answered HTTP " + reply.statusCode() + ": " + reply.body());
        }
        if (!reply.headers().firstValue("Content-Type").orElse("").startsWith("text/event-stream")) {
            return JSON.readTree(reply.body());
        }
        for (String line : reply.body().split("\n")) {
            if (line.startsWith("data:")) {
                JsonNode message = JSON.readTree(line.substring(5).strip());
                if (message.path("id").asLong(-1) == id && !message.has("method")) {
                    return message;
                }
            }
        }
        throw new CallFailed(what + ": the event stream ended without the response to " + id + ": " + reply.body());
    }

    /** A call's result; a JSON-RPC error or a tool error fails. */
    static JsonNode result(JsonNode response, String what) {
        if (response.has("error")) {
            throw new CallFailed(what + " failed: " + response.get("error"));
        }
        JsonNode result = response.path("result");
        if (result.path("isError").asBoolean()) {
            throw new CallFailed(what + " answered a tool error: " + result);
        }
        return result;
    }

    /** The text of a tool result's first content item, parsed as JSON (response_format json). */
    static JsonNode content(JsonNode result) {
        try {
            return JSON.readTree(result.path("content").path(0).path("text").asText());
        } catch (IOException e) {
            throw new CallFailed("not JSON: " + result);
        }
    }

    /** A call that failed: HTTP status, JSON-RPC error or tool error. */
    static final class CallFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        CallFailed(String message) {
            super(message);
        }
    }
}

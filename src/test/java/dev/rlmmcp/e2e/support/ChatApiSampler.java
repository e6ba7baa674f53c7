package dev.rlmmcp.e2e.support;

import static dev.rlmmcp.e2e.support.McpDriver.MAPPER;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * Answers a sampling/createMessage request as a client with a model of its own would: by asking an
 * OpenAI-compatible chat completions endpoint, as {@code e2e/mcp-driver.mjs --sampling-url} does (the
 * system prompt first, then the request's messages, its token limit and the model it hints at first).
 */
public final class ChatApiSampler {

    private final URI chatCompletions;
    private final HttpClient http =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    /** {@code baseUrl}: the endpoint's base, e.g. {@code http://127.0.0.1:8000/v1}. */
    public ChatApiSampler(URI baseUrl) {
        this.chatCompletions = URI.create(baseUrl.toString().replaceAll("/+$", "") + "/chat/completions");
    }

    /** The sampling result (role, text content, model, stopReason); an endpoint's failure throws. */
    JsonNode answer(JsonNode params) throws IOException, InterruptedException {
        ObjectNode body = chatRequest(params);
        HttpResponse<String> reply = http.send(
                HttpRequest.newBuilder(chatCompletions)
                        .header("Content-Type", "application/json")
                        .timeout(Duration.ofMinutes(2))
                        .POST(HttpRequest.BodyPublishers.ofString(MAPPER.writeValueAsString(body)))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        if (reply.statusCode() != 200) {
            throw new IOException(chatCompletions + " answered HTTP " + reply.statusCode() + ": " + reply.body());
        }
        JsonNode completion = MAPPER.readTree(reply.body());
        JsonNode choice = completion.path("choices").path(0);
        if (!choice.path("message").path("content").isTextual()) {
            throw new IOException(chatCompletions + " sent no choices[0].message.content: " + reply.body());
        }
        ObjectNode result = MAPPER.createObjectNode().put("role", "assistant");
        result.putObject("content")
                .put("type", "text")
                .put("text", choice.path("message").path("content").asText());
        result.put("model", completion.path("model").asText(body.path("model").asText("unknown")));
        result.put("stopReason", "length".equals(choice.path("finish_reason").asText()) ? "maxTokens" : "endTurn");
        return result;
    }

    static ObjectNode chatRequest(JsonNode params) {
        ObjectNode body = MAPPER.createObjectNode();
        String hint = params.path("modelPreferences")
                .path("hints")
                .path(0)
                .path("name")
                .asText("");
        if (!hint.isEmpty()) {
            body.put("model", hint);
        }
        ArrayNode messages = body.putArray("messages");
        if (!params.path("systemPrompt").asText("").isEmpty()) {
            messages.addObject()
                    .put("role", "system")
                    .put("content", params.path("systemPrompt").asText());
        }
        for (JsonNode m : params.path("messages")) {
            messages.addObject().put("role", m.path("role").asText()).put("content", text(m.path("content")));
        }
        if (params.path("maxTokens").canConvertToInt()) {
            body.put("max_tokens", params.path("maxTokens").asInt());
        }
        return body;
    }

    /** The text of a message's content: one content item or a list of them. */
    static String text(JsonNode content) {
        if (!content.isArray()) {
            return "text".equals(content.path("type").asText())
                    ? content.path("text").asText()
                    : "";
        }
        StringBuilder text = new StringBuilder();
        for (JsonNode item : content) {
            if ("text".equals(item.path("type").asText())) {
                text.append(text.isEmpty() ? "" : "\n").append(item.path("text").asText());
            }
        }
        return text.toString();
    }
}

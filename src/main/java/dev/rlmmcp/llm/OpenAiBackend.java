package dev.rlmmcp.llm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.concurrent.Executors;

/**
 * Chat completions over HTTP ({@code POST {base}/chat/completions}), as OpenAI, vLLM, llama.cpp's
 * server and Ollama offer them. The key goes only into the Authorization header: never into a log,
 * an error message or the kernel.
 */
public final class OpenAiBackend implements LlmBackend {

    private static final int ERROR_SNIPPET = 500;

    private final OpenAiConfig config;
    private final URI endpoint;
    private final ObjectMapper json;
    private final HttpClient http;

    public OpenAiBackend(OpenAiConfig config, ObjectMapper json) {
        this.config = config;
        String base = config.baseUrl().toString().replaceAll("/+$", "");
        this.endpoint = URI.create(base + "/chat/completions");
        this.json = json;
        this.http = HttpClient.newBuilder()
                .version(
                        "https".equalsIgnoreCase(endpoint.getScheme())
                                ? HttpClient.Version.HTTP_2
                                : HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10))
                .followRedirects(HttpClient.Redirect.NEVER)
                .executor(Executors.newVirtualThreadPerTaskExecutor())
                .build();
    }

    @Override
    public String name() {
        return "openai";
    }

    @Override
    public LlmAnswer complete(LlmRequest request, Duration timeout) throws LlmException, InterruptedException {
        String model = request.model() != null ? request.model() : config.model();
        if (model == null) {
            throw new LlmException(
                    "NOT_CONFIGURED", "no model named: pass model=... or set RLM_LLM_MODEL / --llm-model");
        }
        HttpRequest.Builder post = HttpRequest.newBuilder(endpoint)
                .timeout(timeout)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body(request, model)));
        if (config.apiKey() != null && !config.apiKey().isEmpty()) {
            post.header("Authorization", "Bearer " + config.apiKey());
        }
        HttpResponse<byte[]> response;
        try {
            response = http.send(post.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (HttpTimeoutException e) {
            throw new LlmException(
                    "TIMEOUT",
                    "the OpenAI-compatible API at " + config.baseUrl() + " did not answer within " + timeout.toSeconds()
                            + " s");
        } catch (IOException e) {
            throw new LlmException(
                    "BACKEND_ERROR", "cannot reach the OpenAI-compatible API at " + config.baseUrl() + ": " + e);
        }
        if (response.statusCode() / 100 != 2) {
            throw new LlmException(
                    "BACKEND_ERROR",
                    "the OpenAI-compatible API at " + config.baseUrl() + " answered HTTP " + response.statusCode()
                            + ": " + redact(errorText(response.body())));
        }
        return answer(response.body(), model);
    }

    private byte[] body(LlmRequest request, String model) {
        ObjectNode body = json.createObjectNode().put("model", model);
        ArrayNode messages = body.putArray("messages");
        if (request.system() != null) {
            messages.addObject().put("role", "system").put("content", request.system());
        }
        for (LlmMessage m : request.messages()) {
            messages.addObject().put("role", m.role()).put("content", m.content());
        }
        if (request.maxTokens() != null) {
            body.put("max_tokens", request.maxTokens());
        }
        try {
            return json.writeValueAsBytes(body);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private LlmAnswer answer(byte[] bytes, String model) throws LlmException {
        JsonNode reply;
        try {
            reply = json.readTree(bytes);
        } catch (IOException e) {
            throw new LlmException(
                    "BACKEND_ERROR",
                    "the OpenAI-compatible API answered something that is not JSON: "
                            + snippet(new String(bytes, java.nio.charset.StandardCharsets.UTF_8)));
        }
        JsonNode content = reply.path("choices").path(0).path("message").path("content");
        if (!content.isTextual()) {
            throw new LlmException(
                    "BACKEND_ERROR",
                    "the OpenAI-compatible API's answer has no choices[0].message.content: "
                            + snippet(reply.toString()));
        }
        JsonNode usage = reply.path("usage");
        return new LlmAnswer(
                content.asText(),
                count(usage.path("prompt_tokens")),
                count(usage.path("completion_tokens")),
                reply.path("model").asText(model));
    }

    private static Long count(JsonNode n) {
        return n.isIntegralNumber() ? n.asLong() : null;
    }

    private String errorText(byte[] body) {
        String text = new String(body, java.nio.charset.StandardCharsets.UTF_8);
        try {
            JsonNode message = json.readTree(body).path("error").path("message");
            if (message.isTextual()) {
                return snippet(message.asText());
            }
        } catch (IOException | RuntimeException e) {
            // not JSON: show the text
        }
        return snippet(text.isBlank() ? "(empty body)" : text);
    }

    /** An API may echo the key in an error; it must not reach the kernel or a log. */
    private String redact(String text) {
        String key = config.apiKey();
        return key == null || key.length() < 4 ? text : text.replace(key, "***");
    }

    private static String snippet(String text) {
        return text.length() <= ERROR_SNIPPET ? text : text.substring(0, ERROR_SNIPPET) + "…";
    }
}

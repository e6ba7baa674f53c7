package dev.rlmmcp.tools;

import dev.rlmmcp.llm.LlmAnswer;
import dev.rlmmcp.llm.LlmBackend;
import dev.rlmmcp.llm.LlmException;
import dev.rlmmcp.llm.LlmRequest;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;

/**
 * llm_query answered by the MCP client that made the current tool call: a sampling/createMessage
 * request over that call's own exchange (so over its stdio pipe, or its HTTP response stream).
 */
final class McpSamplingBackend implements LlmBackend {

    static final int DEFAULT_MAX_TOKENS = 1024;

    private final McpSyncServerExchange exchange;

    private McpSamplingBackend(McpSyncServerExchange exchange) {
        this.exchange = exchange;
    }

    /** Sampling through this exchange, or null if its client did not declare the sampling capability. */
    static LlmBackend of(McpSyncServerExchange exchange) {
        McpSchema.ClientCapabilities capabilities = exchange == null ? null : exchange.getClientCapabilities();
        return capabilities != null && capabilities.sampling() != null ? new McpSamplingBackend(exchange) : null;
    }

    @Override
    public String name() {
        return "sampling";
    }

    @Override
    public LlmAnswer complete(LlmRequest request, Duration timeout) throws LlmException, InterruptedException {
        McpSchema.CreateMessageRequest.Builder create = McpSchema.CreateMessageRequest.builder()
                .messages(request.messages().stream()
                        .map(m -> new McpSchema.SamplingMessage(
                                "assistant".equals(m.role()) ? McpSchema.Role.ASSISTANT : McpSchema.Role.USER,
                                new McpSchema.TextContent(m.content())))
                        .toList())
                .maxTokens(request.maxTokens() == null ? DEFAULT_MAX_TOKENS : request.maxTokens());
        if (request.system() != null) {
            create.systemPrompt(request.system());
        }
        if (request.model() != null) {
            create.modelPreferences(McpSchema.ModelPreferences.builder()
                    .addHint(request.model())
                    .build());
        }
        McpSchema.CreateMessageResult result;
        try {
            result = exchange.createMessage(create.build());
        } catch (McpError e) {
            throw new LlmException("BACKEND_ERROR", "the MCP client refused the sampling request: " + e.getMessage());
        } catch (RuntimeException e) {
            if (Thread.interrupted() || e.getCause() instanceof InterruptedException) {
                throw new InterruptedException("sampling abandoned");
            }
            throw new LlmException("BACKEND_ERROR", "the sampling request to the MCP client failed: " + e.getMessage());
        }
        if (!(result.content() instanceof McpSchema.TextContent text)) {
            throw new LlmException(
                    "BACKEND_ERROR",
                    "the MCP client answered the sampling request with "
                            + (result.content() == null
                                    ? "no content"
                                    : result.content().type() + " content") + ", not text");
        }
        return new LlmAnswer(text.text(), null, null, result.model());
    }
}

package dev.rlmmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;

class ToolCatalogTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static final RlmTool ECHO = new RlmTool() {
        @Override
        public String name() {
            return "rlm_echo";
        }

        @Override
        public String description() {
            return "Echoes text.";
        }

        @Override
        public Schema schema() {
            return Schema.object().string("text", "What to echo.", true);
        }

        @Override
        public ObjectNode call(Args args, Caller caller) {
            return JSON.createObjectNode().put("status", "ok").put("stdout", args.requiredString("text") + "\n");
        }
    };

    private final ToolCatalog catalog = new ToolCatalog(List.of(ECHO), JSON);

    private static String text(McpSchema.CallToolResult result) {
        return ((McpSchema.TextContent) result.content().getFirst()).text();
    }

    @Test
    void everyToolAcceptsResponseFormatAndDeclaresNoOutputSchema() {
        McpSchema.Tool tool = catalog.specifications().getFirst().tool();
        assertThat(tool.inputSchema().get("properties"))
                .asInstanceOf(InstanceOfAssertFactories.map(String.class, Object.class))
                .containsKeys("text", "response_format");
        assertThat(tool.outputSchema()).isNull();
    }

    @Test
    void textIsTheDefaultWithoutStructuredContent() {
        McpSchema.CallToolResult result = catalog.call(ECHO, Map.of("text", "hi"), new Caller("c"));
        assertThat(text(result)).isEqualTo("hi\n");
        assertThat(result.structuredContent()).isNull();
        assertThat(result.isError()).isFalse();
    }

    @Test
    void jsonOnRequestAsTheOnlyTextWithoutStructuredContent() throws Exception {
        McpSchema.CallToolResult result =
                catalog.call(ECHO, Map.of("text", "hi", "response_format", "json"), new Caller("c"));
        JsonNode fromText = JSON.readTree(text(result));
        assertThat(fromText.path("stdout").asText()).isEqualTo("hi\n");
        assertThat(result.content()).hasSize(1);
        assertThat(result.structuredContent()).isNull();
        assertThat(result.isError()).isFalse();
    }

    @Test
    void markdownIsRenderedOnRequest() {
        McpSchema.CallToolResult result =
                catalog.call(ECHO, Map.of("text", "hi", "response_format", "markdown"), new Caller("c"));
        assertThat(text(result)).startsWith("## rlm_echo: ok\n").contains("```\nhi\n```");
        assertThat(result.structuredContent()).isNull();
    }

    @Test
    void toonIsRenderedOnRequestInAFencedBlock() {
        McpSchema.CallToolResult result =
                catalog.call(ECHO, Map.of("text", "hi", "response_format", "toon"), new Caller("c"));
        assertThat(text(result)).isEqualTo("```toon\nstatus: ok\nstdout: \"hi\\n\"\n```");
        assertThat(result.structuredContent()).isNull();
    }

    @Test
    void anUnknownFormatIsRefusedNamingTheArgumentAndTheFix() {
        McpSchema.CallToolResult result =
                catalog.call(ECHO, Map.of("text", "hi", "response_format", "yaml"), new Caller("c"));
        assertThat(result.isError()).isTrue();
        assertThat(text(result))
                .startsWith("ERROR INVALID_ARGUMENT (response_format): ")
                .contains("\nfix: pass response_format as \"text\", \"json\", \"markdown\" or \"toon\"");
    }

    @Test
    void refusalsFollowTheRequestedFormat() {
        McpSchema.CallToolResult result = catalog.call(ECHO, Map.of("response_format", "markdown"), new Caller("c"));
        assertThat(result.isError()).isTrue();
        assertThat(text(result)).contains("**ERROR INVALID_ARGUMENT**", "argument: text");
    }

    @Test
    void thePromptTeachesTheWorkflowAndCarriesTheTask() {
        assertThat(RlmPrompt.text(null))
                .contains(
                        "llm_query",
                        "llm_query_batched",
                        "LLMQueryError",
                        "RLM_LLM_BASE_URL",
                        "MCP sampling",
                        "SUSPENDS",
                        "rlm_answer",
                        "rlm_pending",
                        "rlm_finalize",
                        "rlm_get_var")
                .doesNotContain("Your task");
        assertThat(RlmPrompt.text("count the errors")).endsWith("Your task:\ncount the errors");
    }
}

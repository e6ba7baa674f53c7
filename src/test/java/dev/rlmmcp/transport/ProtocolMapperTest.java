package dev.rlmmcp.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ProtocolMapperTest {

    private static final JacksonMcpJsonMapper MAPPER = new JacksonMcpJsonMapper(new ObjectMapper());

    @Test
    void sdkConversionFailuresNameTheField() {
        ProtocolMapper mapper = new ProtocolMapper(MAPPER);
        assertThatThrownBy(() -> mapper.convertValue(
                        Map.of("name", "x", "arguments", "y"), new TypeRef<McpSchema.GetPromptRequest>() {}))
                .isInstanceOfSatisfying(McpError.class, e -> {
                    assertThat(e.getJsonRpcError().code()).isEqualTo(-32602);
                    assertThat(e.getMessage()).isEqualTo("params.arguments must be a JSON object");
                });
        assertThatThrownBy(() -> mapper.convertValue("x", McpSchema.CallToolRequest.class))
                .hasMessage("params must be a JSON object");
    }
}

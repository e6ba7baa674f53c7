package dev.rlmmcp.face;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonRpcTest {

    @Test
    void errorDataWithExceptionMessagesIsDropped() {
        McpSchema.JSONRPCResponse withData = McpSchema.JSONRPCResponse.error(1, new McpSchema.JSONRPCResponse.JSONRPCError(
                -32603, "boom", "java.lang.IllegalStateException: boom\n\tat x.y(Z.java:1)"));
        McpSchema.JSONRPCResponse clean = (McpSchema.JSONRPCResponse) JsonRpc.withoutTraces(withData);
        assertThat(clean.error().data()).isNull();
        assertThat(clean.error().message()).isEqualTo("boom");
        assertThat(clean.error().code()).isEqualTo(-32603);
        McpSchema.JSONRPCNotification other = new McpSchema.JSONRPCNotification("2.0", "x", null);
        assertThat(JsonRpc.withoutTraces(other)).isSameAs(other);
    }

    @Test
    void paramsMustBeAnObjectWhenPresent() {
        assertThat(JsonRpc.badParams("tools/call", "x")).contains("tools/call", "the string \"x\"");
        assertThat(JsonRpc.badParams("tools/call", List.of())).isNotNull();
        assertThat(JsonRpc.badParams("ping", null)).isNull();
        assertThat(JsonRpc.badParams("tools/list", Map.of())).isNull();
    }

    @Test
    void briefKeepsTheFirstLineOnly() {
        assertThat(JsonRpc.brief(new IOException("Unexpected character\n at [Source: ...]"))).isEqualTo("Unexpected character");
        assertThat(JsonRpc.brief(new IOException("x".repeat(500)))).hasSize(203);
    }

    @Test
    void accessLogPathsAreAlwaysValidJsonStrings() {
        assertThat(AccessLog.safe("/mcp")).isEqualTo("/mcp");
        assertThat(AccessLog.safe("/a\"b\\c\n")).isEqualTo("/a?b?c?");
        assertThat(AccessLog.safe(null)).isEmpty();
    }
}

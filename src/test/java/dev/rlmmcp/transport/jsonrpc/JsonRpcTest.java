package dev.rlmmcp.transport.jsonrpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class JsonRpcTest {

    @Test
    void errorDataWithExceptionMessagesIsDropped() {
        McpSchema.JSONRPCResponse withData = McpSchema.JSONRPCResponse.error(
                1,
                new McpSchema.JSONRPCResponse.JSONRPCError(
                        -32603, "boom", "java.lang.IllegalStateException: boom\n\tat x.y(Z.java:1)"));
        McpSchema.JSONRPCResponse clean = (McpSchema.JSONRPCResponse) JsonRpc.withoutTraces(withData);
        assertThat(clean.error().data()).isNull();
        assertThat(clean.error().message()).isEqualTo("boom");
        assertThat(clean.error().code()).isEqualTo(-32603);
        McpSchema.JSONRPCNotification other = new McpSchema.JSONRPCNotification("2.0", "x", null);
        assertThat(JsonRpc.withoutTraces(other)).isSameAs(other);
    }

    private static final JacksonMcpJsonMapper MAPPER = new JacksonMcpJsonMapper(new ObjectMapper());

    private static JsonRpc.Refused refusal(String json) {
        try {
            JsonRpc.parse(MAPPER, json.getBytes(StandardCharsets.UTF_8));
        } catch (JsonRpc.Refused e) {
            return e;
        }
        throw new AssertionError("accepted: " + json);
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '~',
            value = {
                "{x                                                                  | -32700 | not valid JSON",
                "~~                                                                  | -32700 | empty",
                "\"x\"                                                             | -32600 | JSON object",
                "[]                                                                  | -32600 | empty",
                "[{}]                                                                | -32600 | batches",
                "{\"id\":1,\"method\":\"ping\"}                                 | -32600 | jsonrpc is missing",
                "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}         | -32600 | jsonrpc must be",
                "{\"jsonrpc\":\"2.0\",\"id\":1}                                 | -32600 | method is missing",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":[]}                 | -32600 | method must be",
                "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}       | -32600 | id must be",
                "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}      | -32600 | id must not be null",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":1} | -32602 | params of x",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":1}} | -32602 | params.name",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"t\",\"arguments\":[]}} | -32602 | params.arguments",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"_meta\":1}} | -32602 | params._meta",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"_meta\":{\"progressToken\":[]}}} | -32602 | params._meta.progressToken",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"x\"}             | -32600 | error must be",
            })
    void malformedMessagesAreRefusedInTheProtocolsWords(String json, int code, String names) {
        JsonRpc.Refused refused = refusal(json);
        assertThat(refused.code()).isEqualTo(code);
        assertThat(refused.getMessage()).contains(names);
        assertThat(JsonRpc.clean(refused.getMessage())).as(refused.getMessage()).isTrue();
    }

    @Test
    void deepNestingIsAParseErrorNotAStackOverflow() {
        String deep = "[".repeat(100_000) + "]".repeat(100_000);
        for (String json :
                List.of(deep, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":" + deep + "}}")) {
            JsonRpc.Refused refused = refusal(json);
            assertThat(refused.code()).isEqualTo(-32700);
            assertThat(refused.getMessage()).isEqualTo("not accepted as JSON: nested more than 1000 levels deep");
        }
        // above the size from which long strings are lifted out first
        String large = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"s\":\"" + "x".repeat(1 << 20)
                + "\",\"a\":" + deep + "}}";
        assertThat(refusal(large).getMessage()).contains("nested more than 1000 levels");
        assertThat(refusal("{\"a\":1" + "0".repeat(2000) + "}").getMessage())
                .contains("number longer than 1000 digits");
    }

    @Test
    void wellFormedMessagesAreBuiltWithoutConversion() throws Exception {
        McpSchema.JSONRPCMessage call = JsonRpc.parse(MAPPER, """
                {"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":{"a":[1]},"_meta":{"progressToken":"p"}}}""".getBytes(StandardCharsets.UTF_8));
        assertThat(call).isInstanceOf(McpSchema.JSONRPCRequest.class);
        assertThat(((McpSchema.JSONRPCRequest) call).id()).isEqualTo(7);
        assertThat(JsonRpc.parse(
                        MAPPER,
                        "{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":null}".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(McpSchema.JSONRPCNotification.class);
        assertThat(JsonRpc.parse(
                        MAPPER, "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"result\":{}}".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(McpSchema.JSONRPCResponse.class);
        assertThat(refusal("{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":1}")
                        .answerable())
                .isFalse();
        // a client's error answer with a null id, or any malformed response, is never answered
        assertThat(refusal("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":1,\"message\":\"m\"}}")
                        .answerable())
                .isFalse();
        assertThat(refusal("{\"id\":\"a\",\"result\":{}}").answerable()).isFalse();
        assertThat(refusal("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"n\",\"params\":1}")
                        .id())
                .isEqualTo(3);
    }

    @Test
    void errorMessagesWithJavaInternalsAreReplaced() {
        McpSchema.JSONRPCResponse leaky = McpSchema.JSONRPCResponse.error(
                1,
                new McpSchema.JSONRPCResponse.JSONRPCError(
                        -32603, "Cannot construct instance of `java.util.LinkedHashMap`", null));
        assertThat(((McpSchema.JSONRPCResponse) JsonRpc.withoutTraces(leaky))
                        .error()
                        .message())
                .isEqualTo("internal error; the server log has the details");
        McpSchema.JSONRPCResponse unknownTool = McpSchema.JSONRPCResponse.error(
                2,
                new McpSchema.JSONRPCResponse.JSONRPCError(
                        -32602, "Unknown tool: invalid_tool_name", "Tool not found: nope"));
        assertThat(((McpSchema.JSONRPCResponse) JsonRpc.withoutTraces(unknownTool))
                        .error()
                        .message())
                .contains("\"nope\"", "params.name");
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
        assertThat(JsonRpc.brief(new IOException("Unexpected character\n at [Source: ...]")))
                .isEqualTo("Unexpected character");
        assertThat(JsonRpc.brief(new IOException("x".repeat(500)))).hasSize(203);
    }
}

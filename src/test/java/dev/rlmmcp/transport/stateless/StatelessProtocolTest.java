package dev.rlmmcp.transport.stateless;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

class StatelessProtocolTest {

    private static final Map<String, Object> META =
            Map.of(StatelessProtocol.META_VERSION, "2026-07-28", StatelessProtocol.META_CAPABILITIES, Map.of());

    private final StatelessProtocol revision =
            new StatelessProtocol(new JacksonMcpJsonMapper(new ObjectMapper()), StatelessTools.NONE);

    private static UnaryOperator<String> headers(String... pairs) {
        Map<String, String> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        for (int i = 0; i < pairs.length; i += 2) {
            headers.put(pairs[i], pairs[i + 1]);
        }
        return headers::get;
    }

    private static McpSchema.JSONRPCRequest call(String method, Map<String, Object> params) {
        return new McpSchema.JSONRPCRequest(McpSchema.JSONRPC_VERSION, method, 7, params);
    }

    @Test
    void aRequestOfTheRevisionIsKnownByItsHeaderOrWithoutOneByItsMeta() {
        McpSchema.JSONRPCRequest withMeta = call("tools/list", Map.of("_meta", META));
        assertThat(StatelessProtocol.claims("2026-07-28", call("tools/list", Map.of())))
                .isTrue();
        assertThat(StatelessProtocol.claims(" 2026-07-28 ", withMeta)).isTrue();
        assertThat(StatelessProtocol.claims(null, withMeta)).isTrue();
        assertThat(StatelessProtocol.claims("2025-11-25", withMeta)).isFalse();
        assertThat(StatelessProtocol.claims(null, call("tools/list", Map.of()))).isFalse();
    }

    @Test
    void aToolThatNeedsSamplingIsListedOnlyToARequestThatDeclaresSampling() {
        StatelessProtocol offering = new StatelessProtocol(
                new JacksonMcpJsonMapper(new ObjectMapper()),
                new StatelessTools(Map.of(), Map.of(), Set.of("rlm_solve")));
        McpSchema.JSONRPCResponse listed = new McpSchema.JSONRPCResponse(
                McpSchema.JSONRPC_VERSION,
                7,
                new McpSchema.ListToolsResult(
                        List.of(
                                McpSchema.Tool.builder("rlm_execute", Map.of("type", "object"))
                                        .build(),
                                McpSchema.Tool.builder("rlm_solve", Map.of("type", "object"))
                                        .build()),
                        null),
                null);
        Map<String, Object> sampling = Map.of(
                StatelessProtocol.META_VERSION,
                "2026-07-28",
                StatelessProtocol.META_CAPABILITIES,
                Map.of("sampling", Map.of()));
        assertThat(offering.outgoing(call("tools/list", Map.of("_meta", META)), listed)
                        .toString())
                .contains("rlm_execute")
                .doesNotContain("rlm_solve");
        assertThat(offering.outgoing(call("tools/list", Map.of("_meta", sampling)), listed)
                        .toString())
                .contains("rlm_execute", "rlm_solve");
    }

    @Test
    void matchingHeadersAndMetaAreServed() {
        assertThat(revision.check(
                        headers(
                                "MCP-Protocol-Version",
                                "2026-07-28",
                                "mcp-method",
                                " tools/call ",
                                "MCP-NAME",
                                "rlm_execute"),
                        call("tools/call", Map.of("name", "rlm_execute", "_meta", META))))
                .isNull();
        assertThat(revision.check(
                        headers(
                                "MCP-Protocol-Version",
                                "2026-07-28",
                                "Mcp-Method",
                                "resources/read",
                                "Mcp-Name",
                                "test://x"),
                        call("resources/read", Map.of("uri", "test://x", "_meta", META))))
                .isNull();
    }

    @Test
    void headersThatDoNotRepeatTheBodyAreAHeaderMismatch() {
        McpSchema.JSONRPCRequest call = call("tools/call", Map.of("name", "rlm_execute", "_meta", META));
        for (UnaryOperator<String> wrong : List.of(
                headers("MCP-Protocol-Version", "2026-07-28", "Mcp-Name", "rlm_execute"),
                headers("MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "TOOLS/CALL", "Mcp-Name", "rlm_execute"),
                headers("MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call"),
                headers(
                        "MCP-Protocol-Version",
                        "2026-07-28",
                        "Mcp-Method",
                        "tools/call",
                        "Mcp-Name",
                        "rlm_load_data"))) {
            Refusal refusal = revision.check(wrong, call);
            assertThat(refusal).isNotNull();
            assertThat(refusal.status()).isEqualTo(400);
            assertThat(refusal.code()).isEqualTo(StatelessProtocol.HEADER_MISMATCH);
        }
    }

    @Test
    void metaWithoutTheVersionOrCapabilitiesIsInvalidParamsAndAVersionUnlikeTheHeaderAMismatch() {
        UnaryOperator<String> headers = headers("MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "server/discover");
        Refusal none = revision.check(headers, call("server/discover", Map.of()));
        assertThat(none.code()).isEqualTo(McpSchema.ErrorCodes.INVALID_PARAMS);
        assertThat(none.message()).contains("missing: _meta");
        Refusal partial = revision.check(
                headers,
                call("server/discover", Map.of("_meta", Map.of(StatelessProtocol.META_VERSION, "2026-07-28"))));
        assertThat(partial.status()).isEqualTo(400);
        assertThat(partial.message()).contains("missing: " + StatelessProtocol.META_CAPABILITIES);
        Refusal other = revision.check(
                headers,
                call(
                        "server/discover",
                        Map.of(
                                "_meta",
                                Map.of(
                                        StatelessProtocol.META_VERSION,
                                        "v999",
                                        StatelessProtocol.META_CAPABILITIES,
                                        Map.of()))));
        assertThat(other.code()).isEqualTo(StatelessProtocol.HEADER_MISMATCH);
    }

    @Test
    void methodsTheRevisionRemovedAreNotFound() {
        for (String method : List.of("initialize", "ping", "logging/setLevel", "resources/subscribe")) {
            Refusal refusal = revision.check(
                    headers("MCP-Protocol-Version", "2026-07-28", "Mcp-Method", method),
                    call(method, Map.of("_meta", META)));
            assertThat(refusal.status()).as(method).isEqualTo(404);
            assertThat(refusal.code()).isEqualTo(McpSchema.ErrorCodes.METHOD_NOT_FOUND);
        }
        assertThat(revision.removedMethod("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}"
                                .getBytes(StandardCharsets.UTF_8))
                        .status())
                .isEqualTo(404);
        assertThat(revision.removedMethod("{\"method\":\"tools/list\"}".getBytes(StandardCharsets.UTF_8)))
                .isNull();
    }

    @Test
    void anUnsupportedVersionNamesTheSupportedOnesAndEchoesTheRequestedOne() {
        Refusal refusal = StatelessProtocol.unsupported("v999", List.of("2025-11-25", "2026-07-28"));
        assertThat(refusal.status()).isEqualTo(400);
        assertThat(refusal.answer(5)).containsEntry("id", 5);
        assertThat(refusal.answer(5).get("error"))
                .isEqualTo(Map.of(
                        "code",
                        StatelessProtocol.UNSUPPORTED_VERSION,
                        "message",
                        refusal.message(),
                        "data",
                        Map.of("supported", List.of("2025-11-25", "2026-07-28"), "requested", "v999")));
    }

    @Test
    void resultsCarryTheirTypeAndListsAndReadsTheirCacheHints() {
        Map<String, Object> list = revision.dressed("tools/list", Map.of("tools", List.of()));
        assertThat(list)
                .containsEntry("resultType", "complete")
                .containsEntry("ttlMs", 0)
                .containsEntry("cacheScope", "private")
                .containsKey("_meta");
        Map<String, Object> call = revision.dressed("tools/call", Map.of("content", List.of()));
        assertThat(call).containsEntry("resultType", "complete").doesNotContainKeys("ttlMs", "cacheScope");
    }

    @Test
    void answersGetTheStatusTheRevisionAsks() {
        assertThat(StatelessProtocol.status(McpSchema.JSONRPCResponse.result(1, Map.of())))
                .isEqualTo(200);
        assertThat(StatelessProtocol.status(McpSchema.JSONRPCResponse.error(
                        1,
                        new McpSchema.JSONRPCResponse.JSONRPCError(McpSchema.ErrorCodes.METHOD_NOT_FOUND, "no", null))))
                .isEqualTo(404);
        assertThat(StatelessProtocol.status(McpSchema.JSONRPCResponse.error(
                        1,
                        new McpSchema.JSONRPCResponse.JSONRPCError(
                                StatelessProtocol.MISSING_CLIENT_CAPABILITY, "no", null))))
                .isEqualTo(400);
        assertThat(StatelessProtocol.status(McpSchema.JSONRPCResponse.error(
                        1,
                        new McpSchema.JSONRPCResponse.JSONRPCError(McpSchema.ErrorCodes.INTERNAL_ERROR, "no", null))))
                .isEqualTo(200);
    }
}

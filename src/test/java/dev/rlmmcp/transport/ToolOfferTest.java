package dev.rlmmcp.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.spec.McpSchema;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ToolOfferTest {

    private static final McpSchema.ListToolsResult ALL =
            new McpSchema.ListToolsResult(List.of(tool("rlm_execute"), tool("rlm_solve"), tool("rlm_memory")), null);

    private static McpSchema.Tool tool(String name) {
        return McpSchema.Tool.builder()
                .name(name)
                .description(name)
                .inputSchema(new McpSchema.JsonSchema("object", Map.of(), List.of(), false, null, null))
                .build();
    }

    private static McpSchema.JSONRPCRequest initialize(Map<String, Object> capabilities) {
        return new McpSchema.JSONRPCRequest(
                "2.0",
                McpSchema.METHOD_INITIALIZE,
                1,
                Map.of("protocolVersion", "2025-06-18", "capabilities", capabilities, "clientInfo", Map.of()));
    }

    private static List<String> names(McpSchema.JSONRPCMessage message) {
        McpSchema.ListToolsResult listed = (McpSchema.ListToolsResult) ((McpSchema.JSONRPCResponse) message).result();
        return listed.tools().stream().map(McpSchema.Tool::name).toList();
    }

    private static McpSchema.JSONRPCResponse listed() {
        return new McpSchema.JSONRPCResponse("2.0", 2, ALL, null);
    }

    @Test
    void aClientThatDoesNotSampleIsNotListedTheToolsThatNeedIt() {
        ToolOffer offer = new ToolOffer(Set.of("rlm_solve"));
        offer.seen("c1", initialize(Map.of()));
        offer.seen("c2", initialize(Map.of("sampling", Map.of())));
        assertThat(names(offer.outgoing("c1", listed()))).containsExactly("rlm_execute", "rlm_memory");
        assertThat(names(offer.outgoing("c2", listed()))).containsExactly("rlm_execute", "rlm_solve", "rlm_memory");
        assertThat(offer.samples("c1")).isFalse();
        assertThat(offer.samples("c2")).isTrue();
    }

    @Test
    void aConnectionWhoseInitializeWasNotSeenIsListedEveryTool() {
        ToolOffer offer = new ToolOffer(Set.of("rlm_solve"));
        assertThat(names(offer.outgoing("adopted", listed()))).contains("rlm_solve");
        offer.seen("gone", initialize(Map.of()));
        offer.ended("gone");
        assertThat(offer.samples("gone")).isTrue();
    }

    @Test
    void withNoToolThatNeedsSamplingEveryClientIsListedEveryTool() {
        ToolOffer offer = ToolOffer.all();
        offer.seen("c1", initialize(Map.of()));
        McpSchema.JSONRPCResponse answer = listed();
        assertThat(offer.outgoing("c1", answer)).isSameAs(answer);
    }

    @Test
    void otherMessagesGoOutAsTheyAre() {
        ToolOffer offer = new ToolOffer(Set.of("rlm_solve"));
        offer.seen("c1", initialize(Map.of()));
        McpSchema.JSONRPCResponse other = new McpSchema.JSONRPCResponse("2.0", 3, Map.of("x", 1), null);
        assertThat(offer.outgoing("c1", other)).isSameAs(other);
        assertThat(ToolOffer.declaresSampling(Map.of("capabilities", Map.of("sampling", Map.of()))))
                .isTrue();
        assertThat(ToolOffer.declaresSampling(Map.of("capabilities", Map.of("roots", Map.of()))))
                .isFalse();
        assertThat(ToolOffer.declaresSampling(null)).isFalse();
    }
}

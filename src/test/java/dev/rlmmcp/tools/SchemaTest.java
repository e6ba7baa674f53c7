package dev.rlmmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class SchemaTest {

    @Test
    void everySessionIdTravelsInTheSessionIdParamHeader() {
        Map<String, Object> optional = property(Schema.object().sessionId(), "session_id");
        Map<String, Object> required =
                property(Schema.object().string("session_id", "The session.", true), "session_id");
        assertThat(optional).containsEntry("x-mcp-header", "Session-Id").containsEntry("type", "string");
        assertThat(required).containsEntry("x-mcp-header", "Session-Id");
        assertThat(property(Schema.object().string("code", "Code.", true), "code"))
                .doesNotContainKey("x-mcp-header");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> property(Schema schema, String name) {
        return (Map<String, Object>) ((Map<String, Object>) schema.toMap().get("properties")).get(name);
    }
}

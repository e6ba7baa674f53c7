package dev.rlmmcp.transport.jsonrpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LargeStringsTest {

    private final ObjectMapper json = new ObjectMapper(JsonFactory.builder()
            .streamReadConstraints(
                    StreamReadConstraints.builder().maxNameLength(1 << 20).build())
            .build());

    private Map<String, Object> parse(String text) throws Exception {
        return json.readValue(text, new TypeReference<>() {});
    }

    @Test
    void longValuesAreUnescapedHereAndPutBackWhereJacksonWouldHavePutThem() throws Exception {
        String text = "line é \"quoted\" \\ back/slash \t tab 😀 \u0001\n".repeat(3000);
        String key = "k".repeat(LargeStrings.MIN_LENGTH);
        String message = json.writeValueAsString(Map.of(
                        "params",
                        Map.of("arguments", Map.of("data", text, "short", "s\n", key, 1, "list", List.of(text, "x")))))
                .replace("/", "\\/")
                .replace("é", "\\u00e9");
        LargeStrings lifted = LargeStrings.lift(message);
        assertThat(lifted).isNotNull();
        assertThat(lifted.values()).hasSize(2);
        assertThat(lifted.json().length()).isLessThan(LargeStrings.MIN_LENGTH * 2);
        Map<String, Object> tree = parse(lifted.json());
        lifted.restore(tree);
        assertThat(tree).isEqualTo(parse(message));
    }

    @Test
    void messagesWithoutLongValuesOrWithBadEscapesAreLeftToJackson() {
        assertThat(LargeStrings.lift("{\"a\": \"short\"}")).isNull();
        assertThat(LargeStrings.lift("{\"a\": \"" + "x".repeat(LargeStrings.MIN_LENGTH) + "\\q\"}"))
                .isNull();
        assertThat(LargeStrings.lift("{\"a\": \"" + "x".repeat(LargeStrings.MIN_LENGTH) + "\\u12G4\"}"))
                .isNull();
        assertThat(LargeStrings.lift("{\"a\": \"" + "x".repeat(LargeStrings.MIN_LENGTH)))
                .isNull();
    }

    @Test
    void aClientCannotForgeAPlaceholder() throws Exception {
        String message = "{\"a\": \"" + "x".repeat(LargeStrings.MIN_LENGTH) + "\", \"b\": \"\\u0000rlm-lifted-0-0\"}";
        LargeStrings lifted = LargeStrings.lift(message);
        Map<String, Object> tree = parse(lifted.json());
        lifted.restore(tree);
        assertThat(tree.get("b")).isEqualTo("\u0000rlm-lifted-0-0");
    }
}

package dev.rlmmcp.rlm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

class TraceBudgetTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aSmallTreeIsKeptAsItIs() {
        ObjectNode tree = JSON.createObjectNode().put("answer", "x".repeat(10_000));
        assertThat(TraceBudget.fit(tree.deepCopy())).isEqualTo(tree);
    }

    @Test
    void aHugeTreeKeepsItsShapeAndFiguresWithItsTextsClipped() {
        ObjectNode tree = JSON.createObjectNode().put("run_id", "r1");
        var children = tree.putArray("calls");
        for (int i = 0; i < 64; i++) {
            children.addObject().put("response", "y".repeat(200_000)).put("input_tokens", i);
        }
        JsonNode fitted = TraceBudget.fit(tree);
        assertThat(fitted.toString().length()).isLessThanOrEqualTo(TraceBudget.BUDGET_CHARS);
        assertThat(fitted.path("calls")).hasSize(64);
        assertThat(fitted.path("calls").path(63).path("input_tokens").asInt()).isEqualTo(63);
        assertThat(fitted.path("calls").path(0).path("response").asText()).endsWith("more characters]");
        assertThat(fitted.path("clipped_to_chars").asInt()).isPositive();
    }
}

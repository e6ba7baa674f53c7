package dev.rlmmcp.transport.stateless;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class InputResponsesTest {

    private static final ResumableCall.Asked NAME =
            new ResumableCall.Asked("user_name", 1, "elicitation/create", Map.of());

    @Test
    void answersThatFitTheirRequestsPass() {
        assertThat(InputResponses.problem(
                        "elicitation/create", Map.of("action", "accept", "content", Map.of("name", "A"))))
                .isNull();
        assertThat(InputResponses.problem("elicitation/create", Map.of("action", "decline")))
                .isNull();
        assertThat(InputResponses.problem(
                        "sampling/createMessage",
                        Map.of("role", "assistant", "content", Map.of("type", "text", "text", "Paris"), "model", "m")))
                .isNull();
        assertThat(InputResponses.problem("roots/list", Map.of("roots", List.of(Map.of("uri", "file:///r")))))
                .isNull();
    }

    @Test
    void anAnswerThatDoesNotFitIsRefusedNamingItsKey() {
        assertThatThrownBy(() -> InputResponses.check(NAME, 12345))
                .isInstanceOf(ResumableCall.InvalidInput.class)
                .hasMessage(
                        "params.inputResponses.user_name does not answer the elicitation/create request: it must be "
                                + "an object (the request's result), not integer");
        assertThat(InputResponses.problem("elicitation/create", Map.of("action", "maybe")))
                .contains("accept, decline");
        assertThat(InputResponses.problem("elicitation/create", Map.of("action", "accept", "content", "Alice")))
                .contains("content");
        assertThat(InputResponses.problem("sampling/createMessage", Map.of("text", "Paris")))
                .contains("role and content");
        assertThat(InputResponses.problem("roots/list", Map.of("roots", List.of("file:///r"))))
                .contains("uri");
        assertThat(InputResponses.problem("roots/list", java.util.Collections.emptyMap()))
                .contains("roots");
    }
}

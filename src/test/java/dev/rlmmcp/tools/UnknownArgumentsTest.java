package dev.rlmmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class UnknownArgumentsTest {

    private static final List<String> EXECUTE = List.of("code", "timeout_s", "session_id", "response_format");
    private static final List<String> GET_VAR = List.of("var_name", "offset", "max_chars", "session_id");

    @Test
    void argumentsAClientAddsToEveryToolAreDroppedUnnamed() {
        assertThat(new Args("rlm_execute", Map.of("code", "1", "wait_for_previous", true), EXECUTE).ignored())
                .isEmpty();
    }

    @Test
    void otherUnknownArgumentsAreIgnoredAndNamedInOrder() {
        Args args = new Args(
                "rlm_execute",
                Map.of("code", "1", "language", "python", "explanation", "why", "wait_for_previous", true),
                EXECUTE);
        assertThat(args.ignored()).containsExactly("explanation", "language");
        assertThat(args.requiredString("code")).isEqualTo("1");
    }

    @Test
    void aMisspellingOfAnArgumentTheToolTakesIsRefusedWithTheOneItMeant() {
        Map<String, String> meant = Map.of(
                "sesion_id", "session_id",
                "sessionId", "session_id",
                "Session-ID", "session_id",
                "session", "session_id",
                "cod", "code",
                "timeout", "timeout_s",
                "timeuot_s", "timeout_s",
                "response_fromat", "response_format",
                "format", "response_format");
        meant.forEach((given, argument) -> assertThatThrownBy(
                        () -> new Args("rlm_execute", Map.of(given, "x"), EXECUTE))
                .as(given)
                .isInstanceOfSatisfying(RlmException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                    assertThat(e.argument()).isEqualTo(given);
                    assertThat(e.getMessage()).contains("did you mean " + argument + "?");
                    assertThat(e.fix()).startsWith("pass " + argument + " instead");
                }));
        assertThat(UnknownArguments.meant("name", GET_VAR)).isEqualTo("var_name");
        assertThat(UnknownArguments.meant("max_char", GET_VAR)).isEqualTo("max_chars");
    }

    @Test
    void namesFarFromEveryArgumentAreNotTakenForMisspellings() {
        for (String name : List.of("language", "explanation", "wait_for_previous", "thought", "x")) {
            assertThat(UnknownArguments.meant(name, EXECUTE)).as(name).isNull();
        }
        assertThat(UnknownArguments.meant("codex", List.of("code"))).isEqualTo("code");
        assertThat(UnknownArguments.meant("mode", List.of("code"))).isEqualTo("code");
        assertThat(UnknownArguments.meant("model", List.of("code"))).isNull();
    }
}

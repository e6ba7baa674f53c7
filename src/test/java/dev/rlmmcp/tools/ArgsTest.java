package dev.rlmmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.DataType;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ArgsTest {

    private static final List<String> ALLOWED = List.of("name", "code", "timeout_s", "all", "data_type", "session_id");

    private static Args args(Map<String, Object> values) {
        return new Args("rlm_test", values, ALLOWED);
    }

    private static void refused(Runnable read, String argument, String messagePart) {
        assertThatThrownBy(read::run).isInstanceOfSatisfying(RlmException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
            assertThat(e.argument()).isEqualTo(argument);
            assertThat(e.getMessage()).contains(messagePart);
            assertThat(e.fix()).isNotBlank();
        });
    }

    @Test
    void unknownArgumentsAreRefusedWithTheAllowedList() {
        assertThatThrownBy(() -> args(Map.of("timeout", 3))).isInstanceOfSatisfying(RlmException.class, e -> {
            assertThat(e.argument()).isEqualTo("timeout");
            assertThat(e.fix()).contains("timeout_s");
        });
    }

    @Test
    void variableNamesMustBeUsablePythonIdentifiers() {
        assertThat(args(Map.of("name", "logs_2024")).variableName("name")).isEqualTo("logs_2024");
        assertThat(args(Map.of("name", "données")).variableName("name")).isEqualTo("données");
        refused(() -> args(Map.of("name", "2fast")).variableName("name"), "name", "not a valid Python variable name");
        refused(() -> args(Map.of("name", "a-b")).variableName("name"), "name", "not a valid");
        refused(() -> args(Map.of("name", "")).variableName("name"), "name", "not a valid");
        refused(() -> args(Map.of("name", "class")).variableName("name"), "name", "keyword");
        refused(() -> args(Map.of("name", "__builtins__")).variableName("name"), "name", "reserved");
        refused(() -> args(Map.of()).variableName("name"), "name", "needs the argument name");
        refused(() -> args(Map.of("name", 5)).variableName("name"), "name", "must be a string");
    }

    @Test
    void integersAreCheckedForTypeAndRange() {
        assertThat(args(Map.of("timeout_s", 5)).integer("timeout_s", 1, 60)).isEqualTo(5L);
        assertThat(args(Map.of("timeout_s", 5.0)).integer("timeout_s", 1, 60)).isEqualTo(5L);
        assertThat(args(Map.of()).integer("timeout_s", 1, 60)).isNull();
        refused(() -> args(Map.of("timeout_s", 0)).integer("timeout_s", 1, 60), "timeout_s", "outside 1..60");
        refused(() -> args(Map.of("timeout_s", 2.5)).integer("timeout_s", 1, 60), "timeout_s", "whole number");
        refused(() -> args(Map.of("timeout_s", "5")).integer("timeout_s", 1, 60), "timeout_s", "whole number");
        refused(
                () -> args(Map.of("timeout_s", new java.math.BigInteger("1" + "0".repeat(400))))
                        .integer("timeout_s", 1, 60),
                "timeout_s",
                "outside 1..60");
        refused(
                () -> args(Map.of("timeout_s", Double.POSITIVE_INFINITY)).integer("timeout_s", 1, 60),
                "timeout_s",
                "outside 1..60");
        refused(() -> args(Map.of("timeout_s", 1e300)).integer("timeout_s", 1, 60), "timeout_s", "outside 1..60");
        refused(
                () -> args(Map.of("timeout_s", new java.math.BigDecimal("7.25")))
                        .integer("timeout_s", 1, 60),
                "timeout_s",
                "whole number");
        assertThat(args(Map.of("timeout_s", new java.math.BigDecimal("7.00"))).integer("timeout_s", 1, 60))
                .isEqualTo(7L);
    }

    @Test
    void dataTypesAndFlags() {
        assertThat(args(Map.of()).dataType("data_type")).isEqualTo(DataType.TEXT);
        assertThat(args(Map.of("data_type", "CSV")).dataType("data_type")).isEqualTo(DataType.CSV);
        refused(() -> args(Map.of("data_type", "xml")).dataType("data_type"), "data_type", "not a known data type");
        // the host loads child RLMs' contexts as pickles; an agent may not
        refused(() -> args(Map.of("data_type", "pickle")).dataType("data_type"), "data_type", "not a known data type");
        assertThat(DataType.wireNames()).containsExactly("text", "json", "lines", "csv");
        assertThat(DataType.choices()).isEqualTo("text, json, lines, csv");
        assertThat(args(Map.of("all", true)).flag("all")).isTrue();
        refused(() -> args(Map.of("all", "yes")).flag("all"), "all", "true or false");
        refused(() -> args(Map.of("session_id", "")).sessionId(), "session_id", "empty");
    }
}

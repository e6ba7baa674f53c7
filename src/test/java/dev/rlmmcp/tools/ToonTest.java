package dev.rlmmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The TOON encoder against every encoder fixture of the TOON specification (src/test/resources/toon). */
class ToonTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> FIXTURES = List.of(
            "primitives",
            "objects",
            "objects-keyed",
            "arrays-primitive",
            "arrays-tabular",
            "arrays-nested",
            "arrays-objects",
            "delimiters",
            "whitespace");

    static Stream<Arguments> fixtures() throws IOException {
        List<Arguments> cases = new ArrayList<>();
        for (String file : FIXTURES) {
            try (InputStream in = ToonTest.class.getResourceAsStream("/toon/" + file + ".json")) {
                JsonNode fixture = JSON.readTree(in);
                for (JsonNode test : fixture.path("tests")) {
                    cases.add(Arguments.of(file + ": " + test.path("name").asText(), test));
                }
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fixtures")
    void encodesAsTheSpecificationSays(String name, JsonNode test) {
        JsonNode options = test.path("options");
        char delimiter = options.path("delimiter").asText(",").charAt(0);
        int indent = options.path("indentSize").asInt(2);
        assertThat(Toon.encode(test.get("input"), delimiter, indent))
                .isEqualTo(test.path("expected").asText());
    }

    @Test
    void fixturesAreAllThere() throws IOException {
        assertThat(fixtures().count()).isGreaterThan(150);
    }

    @Test
    void aRunPythonReplyIsCompact() throws IOException {
        JsonNode reply = JSON.readTree("""
                {"status":"success","summary":"Success","exitCode":0,"servers":["everything"],
                 "stdout":["hi","3 + 4 = 7"],"stderr":[]}""");
        assertThat(Toon.encode(reply)).isEqualTo("""
                status: success
                summary: Success
                exitCode: 0
                servers[1]: everything
                stdout[2]: hi,3 + 4 = 7
                stderr: []""");
    }

    @Test
    void numbersAreCanonical() throws IOException {
        assertThat(Toon.number(JSON.readTree("1.5000"))).isEqualTo("1.5");
        assertThat(Toon.number(JSON.readTree("-0.0"))).isEqualTo("0");
        assertThat(Toon.number(JSON.readTree("1e21"))).isEqualTo("1e+21");
        assertThat(Toon.number(JSON.readTree("1e-7"))).isEqualTo("1e-7");
        assertThat(Toon.number(JSON.getNodeFactory().numberNode(Double.NaN))).isEqualTo("null");
    }
}

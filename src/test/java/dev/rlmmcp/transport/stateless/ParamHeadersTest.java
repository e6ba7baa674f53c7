package dev.rlmmcp.transport.stateless;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

class ParamHeadersTest {

    private static final Map<String, String> REGION = Map.of("region", "Region");

    private static UnaryOperator<String> headers(String... pairs) {
        Map<String, String> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        for (int i = 0; i < pairs.length; i += 2) {
            headers.put(pairs[i], pairs[i + 1]);
        }
        return headers::get;
    }

    @Test
    void aHeaderMatchesItsArgumentAsIsOrInBase64() {
        assertThat(ParamHeaders.mismatch(REGION, Map.of("region", "eu"), headers("mcp-param-region", " eu ")))
                .isNull();
        assertThat(ParamHeaders.mismatch(
                        REGION, Map.of("region", "Hello"), headers("Mcp-Param-Region", "=?base64?SGVsbG8=?=")))
                .isNull();
        assertThat(ParamHeaders.mismatch(
                        REGION, Map.of("region", "Zürich"), headers("Mcp-Param-Region", "=?base64?WsO8cmljaA==?=")))
                .isNull();
        // not wrapped exactly: the value as it is
        assertThat(ParamHeaders.mismatch(
                        REGION,
                        Map.of("region", "=?base64?SGVsbG8="),
                        headers("Mcp-Param-Region", "=?base64?SGVsbG8=")))
                .isNull();
        assertThat(ParamHeaders.mismatch(REGION, Map.of(), headers())).isNull();
    }

    @Test
    void aMissingWrongOrBadlyEncodedHeaderIsNamed() {
        assertThat(ParamHeaders.mismatch(REGION, Map.of("region", "eu"), headers()))
                .isEqualTo("the Mcp-Param-Region header is missing; it must repeat the argument region");
        assertThat(ParamHeaders.mismatch(REGION, Map.of("region", "eu"), headers("Mcp-Param-Region", "us")))
                .contains("does not match the argument region");
        assertThat(ParamHeaders.mismatch(
                        REGION, Map.of("region", "Hello"), headers("Mcp-Param-Region", "=?base64?SGVsbG8?=")))
                .contains("not valid =?base64?");
        assertThat(ParamHeaders.mismatch(
                        REGION, Map.of("region", "Hello"), headers("Mcp-Param-Region", "=?base64?SGVs!!!bG8=?=")))
                .contains("not valid =?base64?");
        assertThat(ParamHeaders.mismatch(REGION, Map.of(), headers("Mcp-Param-Region", "eu")))
                .contains("does not match");
    }
}

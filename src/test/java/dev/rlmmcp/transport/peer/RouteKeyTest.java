package dev.rlmmcp.transport.peer;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.cluster.PeerAuth;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RouteKeyTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static RouteKey headers(Map<String, String> headers) {
        return RouteKey.ofHeaders(headers::get);
    }

    private static RouteKey body(String body, boolean rpc) {
        return RouteKey.ofBody(body.getBytes(StandardCharsets.UTF_8), rpc, JSON, id -> java.util.Optional.empty());
    }

    @Test
    void theMcpSessionComesFirstThenTheSessionParamHeader() {
        assertThat(headers(Map.of("Mcp-Session-Id", "m1", "Mcp-Param-Session-Id", "s1")))
                .isEqualTo(new RouteKey.McpSession("m1"));
        assertThat(headers(Map.of("Mcp-Param-Session-Id", "s1"))).isEqualTo(new RouteKey.Session("s1"));
        assertThat(headers(Map.of("Mcp-Param-Session-Id", "=?base64?czE=?="))).isEqualTo(new RouteKey.Session("s1"));
        assertThat(headers(Map.of())).isNull();
        assertThat(headers(Map.of("Mcp-Param-Session-Id", "=?base64?!!?="))).isNull();
    }

    @Test
    void theBodyNamesTheSessionOfAToolCallOrOfAPlainRpcCall() {
        assertThat(body(
                        "{\"method\":\"tools/call\",\"params\":{\"name\":\"x\",\"arguments\":{\"session_id\":\"s2\"}}}",
                        false))
                .isEqualTo(new RouteKey.Session("s2"));
        assertThat(body("{\"method\":\"rlm_execute\",\"params\":{\"session_id\":\"s3\",\"code\":\"1\"}}", true))
                .isEqualTo(new RouteKey.Session("s3"));
        assertThat(body("{\"method\":\"tools/list\",\"params\":{\"arguments\":{\"session_id\":\"s2\"}}}", false))
                .isEqualTo(new RouteKey.None());
        assertThat(body("{\"method\":\"tools/call\",\"params\":{\"arguments\":{\"session_id\":7}}}", false))
                .isEqualTo(new RouteKey.None());
        assertThat(body("not json", false)).isEqualTo(new RouteKey.None());
        assertThat(body("[1]", false)).isEqualTo(new RouteKey.None());
    }

    @Test
    void aSessionIdThatIsNotPlainAsciiTravelsBase64Wrapped() {
        assertThat(PeerCall.headerValue("abc-123")).isEqualTo("abc-123");
        assertThat(PeerCall.headerValue("Zürich")).isEqualTo("=?base64?WsO8cmljaA==?=");
        assertThat(PeerCall.headerValue("a b")).startsWith("=?base64?");
    }

    @Test
    void aLegacyMessageGoesToItsStream() {
        assertThat(RouteKey.ofStreamQuery("session_id=abc%2Dd")).isEqualTo(new RouteKey.McpSession("abc-d"));
        assertThat(RouteKey.ofStreamQuery("x=1&session_id=s")).isEqualTo(new RouteKey.McpSession("s"));
        assertThat(RouteKey.ofStreamQuery(null)).isEqualTo(new RouteKey.None());
        assertThat(RouteKey.ofStreamQuery("session_id=")).isEqualTo(new RouteKey.None());
    }

    @Test
    void aTaskIdOrRequestStateNamesTheNodeThatHandedItOut() {
        PeerAuth auth = new PeerAuth("a shared secret of the cluster", "node-b");
        String tag = auth.tag("10.0.0.2:7001");
        RouteKey.Node b = new RouteKey.Node("node-b", "10.0.0.2:7001");
        assertThat(RouteKey.ofBody(
                        bytes("{\"method\":\"tasks/get\",\"params\":{\"taskId\":\"" + tag + "x\"}}"),
                        false,
                        JSON,
                        auth::tagged))
                .isEqualTo(b);
        assertThat(RouteKey.ofBody(
                        bytes("{\"method\":\"tools/call\",\"params\":{\"name\":\"t\",\"requestState\":\"" + tag
                                + "s\"}}"),
                        false,
                        JSON,
                        auth::tagged))
                .isEqualTo(b);
        assertThat(RouteKey.ofBody(
                        bytes("{\"method\":\"subscriptions/listen\",\"params\":{\"notifications\":{\"taskIds\":[\""
                                + tag + "x\"]}}}"),
                        false,
                        JSON,
                        auth::tagged))
                .isEqualTo(b);
        assertThat(RouteKey.ofBody(
                        bytes("{\"method\":\"tasks/get\",\"params\":{\"taskId\":\"node-b~10.6.6.6:1~00~x\"}}"),
                        false,
                        JSON,
                        auth::tagged))
                .isEqualTo(new RouteKey.None());
    }

    private static byte[] bytes(String body) {
        return body.getBytes(StandardCharsets.UTF_8);
    }
}

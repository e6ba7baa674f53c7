package dev.rlmmcp.transport.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.TestSettings;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.ResponseFormat;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;
import dev.rlmmcp.tools.ToolCatalog;
import dev.rlmmcp.transport.McpServers;
import dev.rlmmcp.transport.peer.PeerProxy;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A call refused because this node does not run its session now (SESSION_MOVED: cut off from the cluster
 * database, handing over, or another node owns it; nothing ran) is the node's "not serving" 503 on every HTTP
 * revision, with Retry-After and the marker that it ran nowhere, so that nginx or a forwarding node sends it on.
 * Any other refusal keeps its usual status.
 */
class NotServingReplyTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newHttpClient();
    private Sessions sessions;
    private HttpEndpoint endpoint;

    @BeforeEach
    void start() throws Exception {
        sessions = new Sessions(new KernelFactory(TestSettings.in(dir), new ProcessLauncher(), JSON));
        ToolCatalog catalog = new ToolCatalog(List.of(new Refusing()), JSON);
        endpoint = new HttpEndpoint(new McpServers(catalog, JSON), sessions, JSON, HttpSettings.local(0, 1 << 20));
        endpoint.start();
    }

    @AfterEach
    void stop() {
        endpoint.close();
        sessions.close();
    }

    @Test
    void overRpc() throws Exception {
        HttpResponse<String> moved = post("/rpc", "{\"method\":\"refuse\",\"params\":{\"code\":\"SESSION_MOVED\"}}");
        assertNotServing(moved);
        assertThat(JSON.readTree(moved.body()).path("error").path("code").asText())
                .isEqualTo("SESSION_MOVED");

        HttpResponse<String> other =
                post("/rpc", "{\"method\":\"refuse\",\"params\":{\"code\":\"SESSION_FINALIZED\"}}");
        assertThat(other.statusCode()).isEqualTo(409);
        assertThat(other.headers().firstValue(PeerProxy.OUTCOME)).isEmpty();
    }

    @Test
    void overStreamableHttp2025() throws Exception {
        HttpResponse<String> init = post(
                "/mcp",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
                        + "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
        String session = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
        post("/mcp", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", "Mcp-Session-Id", session);

        HttpResponse<String> moved = post("/mcp", toolCall(2, "SESSION_MOVED"), "Mcp-Session-Id", session);
        assertNotServing(moved);
        assertThat(JSON.readTree(moved.body()).path("result").path("isError").asBoolean())
                .isTrue();

        HttpResponse<String> other = post("/mcp", toolCall(3, "SESSION_FINALIZED"), "Mcp-Session-Id", session);
        assertThat(other.statusCode()).isEqualTo(200);
        assertThat(other.headers().firstValue(PeerProxy.OUTCOME)).isEmpty();
    }

    @Test
    void overTheStatelessRevision() throws Exception {
        String moved = toolCall(1, "SESSION_MOVED")
                .replace(
                        "\"arguments\"",
                        "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                                + "\"io.modelcontextprotocol/clientCapabilities\":{}},\"arguments\"");
        HttpResponse<String> reply = post(
                "/mcp", moved, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "refuse");
        assertNotServing(reply);

        HttpResponse<String> other = post(
                "/mcp",
                moved.replace("SESSION_MOVED", "SESSION_FINALIZED"),
                "MCP-Protocol-Version",
                "2026-07-28",
                "Mcp-Method",
                "tools/call",
                "Mcp-Name",
                "refuse");
        assertThat(other.statusCode()).isEqualTo(200);
    }

    private static void assertNotServing(HttpResponse<String> reply) {
        assertThat(reply.statusCode()).as(reply.body()).isEqualTo(503);
        assertThat(reply.headers().firstValue("Content-Type").orElse("")).contains("application/json");
        assertThat(reply.headers().firstValue("Retry-After")).isPresent();
        assertThat(reply.headers().firstValue(PeerProxy.OUTCOME)).contains(PeerProxy.NOT_RUN);
        assertThat(reply.headers().firstValue(PeerProxy.NOT_SERVING)).contains("true");
        assertThat(reply.body()).contains("nothing ran");
    }

    private static String toolCall(int id, String code) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"refuse\","
                + "\"arguments\":{\"code\":\"" + code + "\"}}}";
    }

    private HttpResponse<String> post(String path, String body, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + endpoint.address().getPort() + path))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Refuses every call with the error code it is given, as a tool of a node that does not run the session. */
    private static final class Refusing implements RlmTool {

        @Override
        public String name() {
            return "refuse";
        }

        @Override
        public String description() {
            return "refuses";
        }

        @Override
        public Schema schema() {
            return Schema.object().string("code", "the error code", true);
        }

        @Override
        public ResponseFormat defaultFormat() {
            return ResponseFormat.JSON;
        }

        @Override
        public ObjectNode call(Args args, Caller caller) {
            throw new RlmException(
                    ErrorCode.valueOf(args.requiredString("code")), "refused; nothing ran", null, "retry");
        }
    }
}

package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client of protocol 2026-07-28 (no initialize, no MCP session: every request carries its version and
 * capabilities) against {@code bin/rlm-mcp serve} with its defaults: it discovers the server, and its REPL
 * variables live on across its stateless calls, in the default session and in a session of its own.
 */
class StatelessRevisionIT {

    @TempDir
    Path tmp;

    private UserServer server;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private int ids;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void aStatelessClientDiscoversTheServerAndKeepsItsVariables() throws Exception {
        Journey.mode(tmp, "rwxr-xr-x");
        Path home = Journey.dirs(tmp, "home");
        server = UserServer.start(UserLaunch.here(tmp, Map.of("HOME", home.toString(),
                "XDG_DATA_HOME", home.resolve(".local/share").toString())));

        JsonNode discover = send("server/discover", null, "{}");
        assertThat(discover.path("result").path("supportedVersions").toString()).contains("2026-07-28", "2025-11-25");
        assertThat(discover.path("result").path("capabilities").has("tools")).isTrue();
        assertThat(discover.path("result").path("_meta").path("io.modelcontextprotocol/serverInfo").path("name").asText())
                .isEqualTo("rlm-mcp");

        JsonNode first = call("rlm_execute", "{\"code\":\"x = 41\"}");
        assertThat(first.path("result").path("resultType").asText()).isEqualTo("complete");
        assertThat(first.path("result").path("isError").asBoolean()).as(first.toString()).isFalse();
        JsonNode second = call("rlm_execute", "{\"code\":\"print(x + 1)\"}");
        assertThat(second.path("result").path("content").toString()).as(second.toString()).contains("42");

        JsonNode created = call("rlm_init_context", "{\"response_format\":\"json\"}");
        String session = McpDriver.MAPPER.readTree(created.path("result").path("content").get(0).path("text").asText())
                .path("session_id").asText();
        call("rlm_execute", "{\"session_id\":\"" + session + "\",\"code\":\"y = 'own'\"}");
        JsonNode own = call("rlm_execute", "{\"session_id\":\"" + session + "\",\"code\":\"print(y, 'x' in globals())\"}");
        assertThat(own.path("result").path("content").toString()).as(own.toString()).contains("own False");

        HttpResponse<String> initialize = post("initialize", null, "{\"protocolVersion\":\"2026-07-28\"}");
        assertThat(initialize.statusCode()).isEqualTo(404);
        assertThat(McpDriver.MAPPER.readTree(initialize.body()).path("error").path("code").asInt()).isEqualTo(-32601);
    }

    private JsonNode call(String tool, String arguments) throws Exception {
        return send("tools/call", tool, "{\"name\":\"" + tool + "\",\"arguments\":" + arguments + "}");
    }

    private JsonNode send(String method, String name, String params) throws Exception {
        HttpResponse<String> reply = post(method, name, params);
        assertThat(reply.statusCode()).as(reply.body()).isEqualTo(200);
        return McpDriver.MAPPER.readTree(reply.body());
    }

    private HttpResponse<String> post(String method, String name, String params) throws Exception {
        String meta = "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                + "\"io.modelcontextprotocol/clientCapabilities\":{}}";
        String withMeta = params.equals("{}") ? "{" + meta + "}" : params.substring(0, params.length() - 1) + "," + meta + "}";
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.mcpUrl()))
                .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2026-07-28").header("Mcp-Method", method)
                .POST(HttpRequest.BodyPublishers.ofString("{\"jsonrpc\":\"2.0\",\"id\":" + (++ids) + ",\"method\":\""
                        + method + "\",\"params\":" + withMeta + "}"));
        if (name != null) {
            request.header("Mcp-Name", name);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}

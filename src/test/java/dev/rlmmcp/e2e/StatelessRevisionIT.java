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
    private String capabilities = "{}";

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

    @Test
    void llmQueryIsAnsweredByTheClientThroughInputRequiredRoundsOfOneExecution() throws Exception {
        Journey.mode(tmp, "rwxr-xr-x");
        Path home = Journey.dirs(tmp, "home");
        server = UserServer.start(UserLaunch.here(tmp, Map.of("HOME", home.toString(),
                "XDG_DATA_HOME", home.resolve(".local/share").toString())));
        capabilities = "{\"sampling\":{}}";
        String step = "{\"code\":\"a = llm_query('capital of France?')\\nb = llm_query_batched(['one', 'two', 'three'])"
                + "\\nprint(a, b)\"}";

        JsonNode first = call("rlm_execute", step).path("result");
        assertThat(first.path("resultType").asText()).as(first.toString()).isEqualTo("input_required");
        assertThat(first.has("content")).isFalse();
        JsonNode asked = first.path("inputRequests");
        assertThat(asked.size()).isEqualTo(1);
        JsonNode sampling = asked.elements().next();
        assertThat(sampling.path("method").asText()).isEqualTo("sampling/createMessage");
        assertThat(sampling.path("params").path("messages").get(0).path("content").path("text").asText())
                .isEqualTo("capital of France?");
        String state = first.path("requestState").asText();

        // an altered state, or one sent with other arguments, is refused, and the execution still waits for its answer
        JsonNode tampered = retry(step, answers(asked), state + "-TAMPERED");
        assertThat(tampered.path("error").path("code").asInt()).as(tampered.toString()).isEqualTo(-32602);
        JsonNode otherCall = retry("{\"code\":\"print(1)\"}", answers(asked), state);
        assertThat(otherCall.path("error").path("code").asInt()).as(otherCall.toString()).isEqualTo(-32602);

        // the batch's three prompts come together, in one round
        JsonNode second = retry(step, answers(asked), state).path("result");
        assertThat(second.path("resultType").asText()).as(second.toString()).isEqualTo("input_required");
        assertThat(second.path("inputRequests").size()).isEqualTo(3);
        assertThat(second.path("requestState").asText()).isNotEqualTo(state);
        JsonNode replayed = retry(step, answers(asked), state);
        assertThat(replayed.path("error").path("code").asInt()).as(replayed.toString()).isEqualTo(-32602);

        JsonNode done = retry(step, answers(second.path("inputRequests")), second.path("requestState").asText())
                .path("result");
        assertThat(done.path("resultType").asText()).as(done.toString()).isEqualTo("complete");
        assertThat(done.path("content").toString()).as(done.toString())
                .contains("answer to capital of France? [", "'answer to one', 'answer to two', 'answer to three']");
        JsonNode after = call("rlm_execute", "{\"code\":\"print(len(b), a)\"}").path("result");
        assertThat(after.path("content").toString()).as(after.toString()).contains("3 answer to capital of France?");
    }

    /** The client's answers to sampling requests: "answer to " and the prompt. */
    private static String answers(JsonNode asked) {
        StringBuilder answers = new StringBuilder("{");
        asked.fields().forEachRemaining(entry -> {
            String prompt = entry.getValue().path("params").path("messages").get(0).path("content").path("text").asText();
            answers.append(answers.length() > 1 ? "," : "").append('"').append(entry.getKey()).append("\":")
                    .append("{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"answer to ")
                    .append(prompt).append("\"},\"model\":\"test-model\",\"stopReason\":\"endTurn\"}");
        });
        return answers.append('}').toString();
    }

    private JsonNode retry(String arguments, String inputResponses, String requestState) throws Exception {
        return send("tools/call", "rlm_execute", "{\"name\":\"rlm_execute\",\"arguments\":" + arguments
                + ",\"inputResponses\":" + inputResponses + ",\"requestState\":\"" + requestState + "\"}");
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
                + "\"io.modelcontextprotocol/clientCapabilities\":" + capabilities + "}";
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

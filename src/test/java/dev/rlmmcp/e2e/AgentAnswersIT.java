package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.RevisionClient;
import dev.rlmmcp.e2e.support.ServerProcess;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent as the model, end to end: no model API and a client that does not sample, so a step whose
 * code asks sub-calls suspends and its tool call returns them; the client answers with rlm_answer. The
 * same scenario runs over stdio and Streamable HTTP (the official TypeScript SDK, MCP 2025-11-25), legacy
 * SSE, plain {@code /rpc} and the 2026-07-28 revision: a whole batch, a second call refused while the
 * step waits, a prompt read, partial answers, a bad answer that gives nothing, a refusal, a cancel, and
 * an rlm_query whose child session suspends in turn. Then, on one server each: a step given up after
 * {@code --agent-wait-s} (its own clock stood still meanwhile), and a SIGKILL while a step waits.
 */
class AgentAnswersIT {

    /** A client of one transport: a tool's reply object, and whether the call was an error. */
    private interface Tools {
        Reply call(String tool, Map<String, ?> args) throws Exception;
    }

    private record Reply(JsonNode body, boolean error) {

        String status() {
            return body.path("status").asText();
        }

        List<String> pendingIds() {
            List<String> ids = new ArrayList<>();
            body.path("pending").forEach(p -> ids.add(p.path("id").asText()));
            return ids;
        }
    }

    @TempDir
    Path tmp;

    @Test
    void overStdioWithTheDefaultBackendTheAgentAnswers() throws Exception {
        try (McpDriver client = McpDriver.stdio(ServerProcess.command(List.of("stdio")))) {
            scenario(sdk(client), "stdio");
            JsonNode text = client.callAsIs("rlm_execute", Map.of("code", "print('t')\nllm_query('show me')"));
            assertThat(McpDriver.text(text))
                    .as("the text a model reads")
                    .startsWith("SUSPENDED: the step waits for 1 sub-call")
                    .contains("show me", "rlm_answer(session_id=", "output so far:\nt");
            assertThat(text.path("isError").asBoolean()).isFalse();
            client.call("rlm_answer", Map.of("cancel", true));
        }
    }

    @Test
    void overEveryHttpTransportAndRevision() throws Exception {
        try (ServerProcess server = ServerProcess.http("--llm-backend", "agent")) {
            try (McpDriver client = McpDriver.http(server.mcpUrl())) {
                scenario(sdk(client), "streamable http");
            }
            try (McpDriver client = McpDriver.sse(server.baseUrl() + "/sse")) {
                scenario(sdk(client), "sse");
            }
            scenario(rpc(server.baseUrl() + "/rpc"), "/rpc");
            RevisionClient stateless = RevisionClient.http(server.mcpUrl(), null);
            scenario(
                    (tool, args) -> {
                        JsonNode result = stateless.callTool(tool, args);
                        return new Reply(
                                McpDriver.json(result), result.path("isError").asBoolean());
                    },
                    "2026-07-28");
        }
    }

    @Test
    void aStepWhoseAnswersDoNotComeIsGivenUpAndItsClockStoodStill() throws Exception {
        try (ServerProcess server = ServerProcess.http("--llm-backend", "agent", "--agent-wait-s", "2")) {
            Tools t = rpc(server.baseUrl() + "/rpc");
            Reply waiting = t.call(
                    "rlm_execute",
                    Map.of(
                            "code",
                            "try:\n    llm_query('anyone?')\nexcept LLMQueryError as e:\n    print('gave up:', e.code)",
                            "timeout_s",
                            1));
            assertThat(waiting.status()).as(waiting.body().toString()).isEqualTo("suspended");
            String session = waiting.body().path("session_id").asText();
            Thread.sleep(3_500);
            Reply ended = t.call("rlm_pending", Map.of("session_id", session));
            assertThat(ended.body().path("status").asText())
                    .as(ended.body().toString())
                    .isEqualTo("ok");
            assertThat(ended.body().path("stdout").asText()).isEqualTo("gave up: TIMEOUT\n");
            Reply next = t.call("rlm_execute", Map.of("session_id", session, "code", "print('free')"));
            assertThat(next.body().path("stdout").asText()).isEqualTo("free\n");
        }
    }

    @Test
    void aSigkillWhileAStepWaitsLosesThatStepOnlyAndTheNextReplySaysSo() throws Exception {
        Path state = Files.createDirectories(tmp.resolve("state"));
        String session;
        try (ServerProcess server =
                ServerProcess.http("--llm-backend", "agent", "--state-dir", state.toString(), "--durable-replies")) {
            Tools t = rpc(server.baseUrl() + "/rpc");
            session = t.call("rlm_execute", Map.of("code", "kept = 'yes'"))
                    .body()
                    .path("session_id")
                    .asText();
            Reply waiting = t.call(
                    "rlm_execute", Map.of("session_id", session, "code", "lost = 1\nllm_query('never answered')"));
            assertThat(waiting.status()).isEqualTo("suspended");
            server.kill();
        }
        try (ServerProcess server = ServerProcess.http("--llm-backend", "agent", "--state-dir", state.toString())) {
            Reply after = rpc(server.baseUrl() + "/rpc")
                    .call("rlm_execute", Map.of("session_id", session, "code", "print(kept, 'lost' in globals())"));
            assertThat(after.body().path("stdout").asText())
                    .as(after.body().toString())
                    .isEqualTo("yes False\n");
            assertThat(after.body().path("notice").asText())
                    .contains("waited for your answers to q1", "lost when the server stopped");
        }
    }

    /** The whole exchange on one transport; every step's facts checked. */
    private static void scenario(Tools t, String transport) throws Exception {
        Reply batch = t.call("rlm_execute", Map.of("code", """
                        print('start')
                        try:
                            answers = llm_query_batched([f"count x in {'x' * i}" for i in range(1, 5)])
                        except LLMQueryError as e:
                            print('refused:', e.code, e.answers)
                        """));
        assertThat(batch.status()).as(transport + ": " + batch.body()).isEqualTo("suspended");
        assertThat(batch.error()).isFalse();
        List<String> ids = batch.pendingIds();
        assertThat(ids).as(transport + ": the batch is returned whole").hasSize(4);
        assertThat(batch.body().path("stdout").asText()).isEqualTo("start\n");
        String session = batch.body().path("session_id").asText();

        Reply busy = t.call("rlm_list_vars", Map.of("session_id", session));
        assertThat(busy.error())
                .as(transport + ": a second call while the step waits")
                .isTrue();
        assertThat(busy.body().path("error").path("code").asText()).isEqualTo("STEP_SUSPENDED");
        assertThat(busy.body().path("error").path("message").asText()).contains(ids.get(0), ids.get(3));

        Reply prompt = t.call("rlm_pending", Map.of("session_id", session, "id", ids.get(2)));
        assertThat(prompt.body().path("prompt").asText()).isEqualTo("count x in xxx");

        Reply part = t.call(
                "rlm_answer",
                Map.of(
                        "session_id",
                        session,
                        "answers",
                        List.of(Map.of("id", ids.get(0), "text", "1"), Map.of("id", ids.get(1), "text", "2"))));
        assertThat(part.pendingIds()).as(transport + ": still pending").containsExactly(ids.get(2), ids.get(3));

        Reply unknown = t.call(
                "rlm_answer",
                Map.of(
                        "session_id",
                        session,
                        "answers",
                        List.of(Map.of("id", ids.get(2), "text", "3"), Map.of("id", "q999", "text", "?"))));
        assertThat(unknown.error()).isTrue();
        assertThat(unknown.body().path("error").path("message").asText()).contains("q999", "no answer was given");

        Reply done = t.call(
                "rlm_answer",
                Map.of(
                        "session_id",
                        session,
                        "answers",
                        List.of(
                                Map.of("id", ids.get(2), "text", "3"),
                                Map.of("id", ids.get(3), "error", "no counting today"))));
        assertThat(done.status()).as(transport + ": " + done.body()).isEqualTo("ok");
        assertThat(done.body().path("stdout").asText())
                .as(transport + ": the rest of the step, without what was shown")
                .isEqualTo("refused: REFUSED ['1', '2', '3', None]\n");

        Reply cancelled = t.call(
                "rlm_execute",
                Map.of(
                        "session_id",
                        session,
                        "code",
                        "try:\n    llm_query('never')\nexcept LLMQueryError as e:\n    print('gave up', e.code)"));
        assertThat(cancelled.status()).isEqualTo("suspended");
        Reply afterCancel = t.call("rlm_answer", Map.of("session_id", session, "cancel", true));
        assertThat(afterCancel.body().path("stdout").asText()).isEqualTo("gave up CANCELLED\n");

        nested(t, session, transport);
    }

    /** rlm_query: a child session with the context; its own llm_query suspends there; the answer is its variable. */
    private static void nested(Tools t, String session, String transport) throws Exception {
        Reply asked = t.call(
                "rlm_execute",
                Map.of(
                        "session_id",
                        session,
                        "code",
                        "hosts = [f'h{i % 3}' for i in range(30)]\nn = rlm_query('distinct hosts?', context=hosts)\n"
                                + "print('n =', n)"));
        assertThat(asked.status()).as(transport + ": " + asked.body()).isEqualTo("suspended");
        JsonNode call = asked.body().path("pending").path(0);
        assertThat(call.path("kind").asText()).isEqualTo("rlm");
        String child = call.path("child_session_id").asText();
        assertThat(child).isNotEmpty().isNotEqualTo(session);

        Reply inChild = t.call(
                "rlm_execute",
                Map.of(
                        "session_id",
                        child,
                        "code",
                        "k = len(set(context))\nsure = rlm_query(f'is {k} right?', context=sorted(set(context)))\n"
                                + "print(len(context), k, sure)"));
        assertThat(inChild.status())
                .as(transport + ": the child's own sub-call")
                .isEqualTo("suspended");
        JsonNode atLimit = inChild.body().path("pending").path(0);
        assertThat(atLimit.path("kind").asText())
                .as(transport + ": rlm_query at the depth limit is an llm request")
                .isEqualTo("llm");
        assertThat(t.call(
                                "rlm_pending",
                                Map.of(
                                        "session_id",
                                        child,
                                        "id",
                                        atLimit.path("id").asText()))
                        .body()
                        .path("prompt")
                        .asText())
                .as(transport + ": with the context's value")
                .startsWith("is 3 right?")
                .contains("h0", "h1", "h2");
        Reply childDone = t.call(
                "rlm_answer",
                Map.of(
                        "session_id",
                        child,
                        "answers",
                        List.of(Map.of("id", inChild.pendingIds().getFirst(), "text", "yes"))));
        assertThat(childDone.body().path("stdout").asText()).isEqualTo("30 3 yes\n");

        Reply parentDone = t.call(
                "rlm_answer",
                Map.of(
                        "session_id",
                        session,
                        "answers",
                        List.of(Map.of("id", call.path("id").asText(), "var", "k"))));
        assertThat(parentDone.body().path("stdout").asText())
                .as(transport + ": " + parentDone.body())
                .isEqualTo("n = 3\n");
        Reply gone = t.call("rlm_list_vars", Map.of("session_id", child));
        assertThat(gone.body().path("error").path("code").asText())
                .as(transport + ": the child session ends with the step that made it")
                .isEqualTo("SESSION_NOT_FOUND");
    }

    private static Tools sdk(McpDriver client) {
        return (tool, args) -> {
            JsonNode result = client.call(tool, args);
            return new Reply(McpDriver.json(result), result.path("isError").asBoolean());
        };
    }

    private static Tools rpc(String url) {
        HttpClient http = HttpClient.newHttpClient();
        return (tool, args) -> {
            String body = McpDriver.MAPPER.writeValueAsString(Map.of("method", tool, "params", args));
            HttpResponse<String> response = http.send(
                    HttpRequest.newBuilder(URI.create(url))
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            JsonNode reply = parse(response.body());
            return new Reply(reply, response.statusCode() != 200 || reply.has("error"));
        };
    }

    private static JsonNode parse(String body) throws IOException {
        return McpDriver.MAPPER.readTree(body);
    }
}

package dev.rlmmcp.e2e;

import static dev.rlmmcp.e2e.support.McpDriver.json;
import static dev.rlmmcp.e2e.support.McpDriver.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What agent clients add to calls and read from the tool list, through the official TypeScript client over
 * stdio and Streamable HTTP: Gemini CLI's {@code wait_for_previous} on every call and arguments a model
 * invents run the call (the latter named in the reply), a misspelt argument is refused with the fix, every
 * integer bound is one a JavaScript number holds and a value at it is accepted, no description shows where
 * the data root is on the host, a server with no S3 named does not offer the S3 tools, and with no model API
 * rlm_solve is offered only to a client that samples.
 */
class ClientArgumentsIT {

    /** 2^53 − 1, the largest whole number a JavaScript client holds exactly. */
    private static final long JS_MAX = 9_007_199_254_740_991L;

    @TempDir
    static Path tmp;

    private static Path dataRoot;
    private static ServerProcess server;
    private static McpDriver http;
    private static McpDriver stdio;

    @BeforeAll
    static void start() throws Exception {
        dataRoot = Files.createDirectories(tmp.resolve("private-host-layout/team-data"));
        Files.writeString(dataRoot.resolve("rows.txt"), "a\nb\nc\n");
        server = ServerProcess.http("--data-root", dataRoot.toString());
        http = McpDriver.http(server.mcpUrl());
        stdio = McpDriver.stdio(ServerProcess.command(List.of("stdio", "--data-root", dataRoot.toString())));
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable c : new AutoCloseable[] {stdio, http, server}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception ignored) {
                // the next one still closes
            }
        }
    }

    private static List<McpDriver> clients() {
        return List.of(stdio, http);
    }

    @Test
    void aChainWithGeminisWaitForPreviousRunsEveryCall() {
        for (McpDriver client : clients()) {
            String session = json(client.call("rlm_init_context", Map.of("wait_for_previous", false)))
                    .path("session_id")
                    .asText();
            JsonNode loaded = json(client.call(
                    "rlm_load_file",
                    Map.of(
                            "name",
                            "rows",
                            "path",
                            "rows.txt",
                            "data_type",
                            "lines",
                            "session_id",
                            session,
                            "wait_for_previous",
                            true)));
            assertThat(loaded.path("ignored_arguments").isMissingNode())
                    .as("a client's own argument is not named: %s", loaded)
                    .isTrue();
            JsonNode result = client.callAsIs(
                    "rlm_execute",
                    Map.of("code", "print(len(rows))", "session_id", session, "wait_for_previous", true));
            assertThat(result.path("isError").asBoolean()).as(result.toString()).isFalse();
            assertThat(text(result)).startsWith("3").doesNotContain("ignored");
        }
    }

    @Test
    void anArgumentAModelInventsRunsTheCallAndIsNamed() {
        for (McpDriver client : clients()) {
            JsonNode result = client.callAsIs("rlm_execute", Map.of("code", "print(6 * 7)", "language", "python"));
            assertThat(result.path("isError").asBoolean()).as(result.toString()).isFalse();
            assertThat(text(result)).startsWith("42").contains("[ignored, not arguments of rlm_execute: language]");
            JsonNode reply = json(client.call("rlm_execute", Map.of("code", "x = 1", "language", "python")));
            assertThat(reply.path("ignored_arguments").toString()).isEqualTo("[\"language\"]");
        }
    }

    @Test
    void aMisspeltArgumentIsRefusedWithTheArgumentItMeant() {
        for (McpDriver client : clients()) {
            json(client.call("rlm_execute", Map.of("code", "kept = 'default'")));
            for (String misspelt : List.of("sesion_id", "sessionId", "Session-ID")) {
                JsonNode result = client.callAsIs("rlm_execute", Map.of("code", "kept = 'moved'", misspelt, "s1"));
                assertThat(result.path("isError").asBoolean())
                        .as(result.toString())
                        .isTrue();
                assertThat(text(result))
                        .contains("INVALID_ARGUMENT (" + misspelt + ")")
                        .contains("did you mean session_id?");
            }
            // refused before it ran: the default session is as it was
            assertThat(json(client.call("rlm_execute", Map.of("code", "print(kept)")))
                            .path("stdout")
                            .asText())
                    .startsWith("default");
        }
    }

    @Test
    void everyIntegerBoundIsOneJavaScriptHoldsAndAValueAtItIsAccepted() {
        for (McpDriver client : clients()) {
            JsonNode tools = client.request(McpDriver.MAPPER.createObjectNode().put("op", "list_tools"))
                    .path("result")
                    .path("tools");
            assertThat(tools.size()).isGreaterThan(15);
            List<String> bounds = new ArrayList<>();
            tools.forEach(tool -> tool.path("inputSchema").findParents("type").forEach(p -> {
                for (String bound : List.of("maximum", "minimum")) {
                    if (p.has(bound)) {
                        bounds.add(tool.path("name").asText() + " " + bound + " " + p.path(bound));
                        assertThat(Math.abs(p.path(bound).asDouble()))
                                .as(tool.path("name") + " " + bound)
                                .isLessThanOrEqualTo(JS_MAX);
                    }
                }
            }));
            assertThat(bounds).anyMatch(b -> b.endsWith("maximum " + JS_MAX));

            Map<String, Object> limits = new LinkedHashMap<>();
            limits.put("max_runtime_ms", JS_MAX);
            limits.put("budget_limit", JS_MAX);
            limits.put("llm_token_budget", JS_MAX);
            String session = json(client.call("rlm_init_context", limits))
                    .path("session_id")
                    .asText();
            json(client.call("rlm_execute", Map.of("code", "word = 'hello'", "session_id", session)));
            JsonNode page = json(
                    client.call("rlm_get_var", Map.of("var_name", "word", "offset", JS_MAX, "session_id", session)));
            assertThat(page.has("error")).as(page.toString()).isFalse();
        }
    }

    @Test
    void rlmSolveIsListedOnlyToAClientThatSamples() throws Exception {
        for (McpDriver client : clients()) {
            assertThat(toolNames(client)).contains("rlm_execute").doesNotContain("rlm_solve");
        }
        try (McpDriver sampling = McpDriver.http(server.mcpUrl(), Map.of(), "an answer");
                McpDriver samplingStdio = McpDriver.stdio(
                        ServerProcess.command(List.of("stdio", "--data-root", dataRoot.toString())), "an answer")) {
            assertThat(toolNames(sampling)).contains("rlm_solve");
            assertThat(toolNames(samplingStdio)).contains("rlm_solve");
        }
    }

    private static List<String> toolNames(McpDriver client) {
        List<String> names = new ArrayList<>();
        client.request(McpDriver.MAPPER.createObjectNode().put("op", "list_tools"))
                .path("result")
                .path("tools")
                .forEach(tool -> names.add(tool.path("name").asText()));
        return names;
    }

    @Test
    void noDescriptionShowsTheHostsPaths() {
        for (McpDriver client : clients()) {
            String listed = client.request(McpDriver.MAPPER.createObjectNode().put("op", "list_tools"))
                    .path("result")
                    .toString();
            String prompts = client.request(McpDriver.MAPPER.createObjectNode().put("op", "list_prompts"))
                    .path("result")
                    .toString();
            String instructions = client.readyLine().path("instructions").asText();
            assertThat(listed).contains("rlm_load_file").contains("data root");
            // no S3 named in the server's environment: the S3 tools could only fail, and are not offered
            assertThat(listed).doesNotContain("rlm_load_s3", "rlm_list_buckets", "rlm_list_s3", "rlm_upload_url");
            for (String path : List.of(dataRoot.toString(), "private-host-layout", tmp.toString())) {
                assertThat(listed).doesNotContain(path);
                assertThat(prompts).doesNotContain(path);
                assertThat(instructions).doesNotContain(path);
            }
        }
    }
}

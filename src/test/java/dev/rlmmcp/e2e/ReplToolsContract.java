package dev.rlmmcp.e2e;

import static dev.rlmmcp.e2e.support.McpDriver.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.McpDriver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every REPL tool through a real MCP client (the official TypeScript SDK). Subclasses supply the
 * transport; the assertions are the same, because every face ends in the same tool handlers.
 */
abstract class ReplToolsContract {

    /** The client, connected to a server whose data root is {@link #dataRoot()}. */
    abstract McpDriver client();

    abstract Path dataRoot();

    /** The tests use os and friends on purpose (crashes, raw writes), so the import guard rail is off. */
    static final List<String> SERVER_FLAGS =
            List.of("--interrupt-grace-ms", "500", "--output-cap", "500", "--blocked-imports", "none");

    /** {@code first}, then {@link #SERVER_FLAGS}. */
    static List<String> withServerFlags(String... first) {
        List<String> args = new java.util.ArrayList<>(List.of(first));
        args.addAll(SERVER_FLAGS);
        return args;
    }

    JsonNode ok(String tool, Map<String, ?> args) {
        JsonNode result = client().call(tool, args);
        assertThat(result.path("isError").asBoolean())
                .as("%s %s -> %s", tool, args, result)
                .isFalse();
        return json(result);
    }

    JsonNode refused(String tool, Map<String, ?> args, String code, String argument) {
        JsonNode result = client().call(tool, args);
        assertThat(result.path("isError").asBoolean())
                .as("%s %s -> %s", tool, args, result)
                .isTrue();
        JsonNode error = json(result).path("error");
        assertThat(error.path("code").asText()).as(error.toString()).isEqualTo(code);
        if (argument != null) {
            assertThat(error.path("argument").asText()).isEqualTo(argument);
        }
        assertThat(error.path("message").asText()).isNotBlank();
        return error;
    }

    JsonNode exec(String code) {
        return json(client().call("rlm_execute", Map.of("code", code)));
    }

    @Test
    void listsEveryReplToolWithItsSchema() {
        JsonNode tools = client().request(McpDriver.MAPPER.createObjectNode().put("op", "list_tools"))
                .path("result")
                .path("tools");
        List<String> repl = List.of(
                "rlm_execute",
                "rlm_load_data",
                "rlm_load_file",
                "rlm_list_vars",
                "rlm_var_info",
                "rlm_clear",
                "rlm_memory");
        assertThat(tools)
                .extracting(t -> t.path("name").asText())
                .containsAll(repl)
                .contains(
                        "rlm_init_context",
                        "rlm_run_repl",
                        "rlm_get_var",
                        "rlm_finalize",
                        "rlm_get_trace",
                        "rlm_sessions",
                        "rlm_delete_session");
        for (JsonNode tool : tools) {
            assertThat(tool.path("description").asText()).isNotBlank();
            assertThat(tool.path("inputSchema").path("properties").has("response_format"))
                    .isTrue();
            if (repl.contains(tool.path("name").asText())) {
                assertThat(tool.path("inputSchema").path("properties").has("session_id"))
                        .isTrue();
            }
        }
    }

    @Test
    void noReplyCarriesStructuredContentAndNoToolDeclaresAnOutputSchema() {
        // A client that gets both shows the model the object twice (Codex) or instead of the text (Claude Code).
        JsonNode tools = client().request(McpDriver.MAPPER.createObjectNode().put("op", "list_tools"))
                .path("result")
                .path("tools");
        for (JsonNode tool : tools) {
            assertThat(tool.has("outputSchema")).as(tool.path("name").asText()).isFalse();
            assertThat(tool.path("inputSchema")
                            .path("properties")
                            .path("response_format")
                            .path("enum")
                            .toString())
                    .isEqualTo("[\"text\",\"json\",\"markdown\",\"toon\"]");
        }
        JsonNode ok = client().call("rlm_execute", Map.of("code", "structured = 1\nprint('s')"));
        assertThat(json(ok).path("stdout").asText()).isEqualTo("s\n");
        JsonNode refused = client().call("rlm_var_info", Map.of("name", "not_there"));
        assertThat(json(refused).path("error").path("code").asText()).isEqualTo("VARIABLE_NOT_FOUND");
        List<JsonNode> results = new java.util.ArrayList<>(List.of(
                ok,
                refused,
                client().call("rlm_execute", Map.of("code", "1/0")),
                client().call("rlm_load_data", Map.of("name", "s_rows", "data", "a\nb", "data_type", "lines")),
                client().call("rlm_list_vars", Map.of()),
                client().call("rlm_memory", Map.of())));
        for (Map<String, ?> call : List.of(
                Map.of("code", "print('t')"),
                Map.of("code", "1/0"),
                Map.of("code", "print('m')", "response_format", "markdown"))) {
            results.add(client().callAsIs("rlm_execute", call));
        }
        for (JsonNode result : results) {
            assertThat(result.has("structuredContent")).as(result.toString()).isFalse();
            assertThat(result.path("content")).as(result.toString()).hasSize(1);
        }
    }

    @Test
    void defaultRepliesAreTextForAModel() {
        assertThat(McpDriver.text(client().callAsIs("rlm_execute", Map.of("code", "print('plain')"))))
                .startsWith("plain\n");
        assertThat(McpDriver.text(client().callAsIs("rlm_execute", Map.of("code", "text_var = 2"))))
                .contains("set text_var")
                .doesNotContain("{");
        JsonNode failed = client().callAsIs("rlm_execute", Map.of("code", "undefined_in_text"));
        assertThat(failed.path("isError").asBoolean()).isTrue();
        assertThat(McpDriver.text(failed))
                .contains("line 1, in <module>", "NameError: name 'undefined_in_text'")
                .doesNotContain("Traceback (most recent call last)");
        JsonNode refused = client().callAsIs("rlm_var_info", Map.of("name", "not_there"));
        assertThat(refused.path("isError").asBoolean()).isTrue();
        assertThat(McpDriver.text(refused))
                .startsWith("ERROR VARIABLE_NOT_FOUND (name): ")
                .contains("\nfix: ");
        assertThat(McpDriver.text(client().callAsIs("rlm_list_vars", Map.of())))
                .startsWith("name | type | len | size")
                .contains("\ntext_var | int | ");
    }

    @Test
    void markdownRepliesShowOutputInCodeBlocks() {
        JsonNode result = client().call(
                        "rlm_execute",
                        Map.of("code", "print('md line 1')\nprint('md line 2')", "response_format", "markdown"));
        assertThat(result.path("isError").asBoolean()).isFalse();
        String md = McpDriver.text(result);
        assertThat(md).startsWith("## rlm_execute: ok").contains("stdout:\n```\nmd line 1\nmd line 2\n```\n");

        JsonNode failed =
                client().call("rlm_execute", Map.of("code", "undefined_in_md", "response_format", "markdown"));
        assertThat(failed.path("isError").asBoolean()).isTrue();
        assertThat(McpDriver.text(failed)).contains("**ERROR NameError**", "traceback:\n```");

        JsonNode vars = client().call("rlm_list_vars", Map.of("response_format", "markdown"));
        assertThat(McpDriver.text(vars)).startsWith("## rlm_list_vars");

        for (Map<String, ?> bad :
                List.of(Map.of("code", "1", "response_format", "yaml"), Map.of("response_format", 1))) {
            JsonNode refusal = client().call(bad.containsKey("code") ? "rlm_execute" : "rlm_memory", bad);
            assertThat(refusal.path("isError").asBoolean()).isTrue();
            assertThat(McpDriver.text(refusal))
                    .as("an unknown format is refused in the default one")
                    .startsWith("ERROR INVALID_ARGUMENT (response_format): ")
                    .contains("\nfix: ");
        }
    }

    @Test
    void theInstructionsAreOneShortSentenceNamingTheFirstTools() {
        // Codex appends them to each of the tool descriptions (18 without S3 and sampling): every byte is paid that
        // many times a
        // turn.
        String instructions = client().readyLine().path("instructions").asText();
        assertThat(instructions).contains("rlm_load_file", "rlm_execute").doesNotContain("\n");
        assertThat(instructions.getBytes(java.nio.charset.StandardCharsets.UTF_8))
                .hasSizeLessThanOrEqualTo(150);
    }

    @Test
    void thePromptRlmTeachesTheWorkflowAndCarriesTheTask() {
        assertThat(client().readyLine().path("capabilities").has("prompts")).isTrue();
        JsonNode prompts = client().request(McpDriver.MAPPER.createObjectNode().put("op", "list_prompts"))
                .path("result")
                .path("prompts");
        JsonNode rlm = null;
        for (JsonNode p : prompts) {
            if (p.path("name").asText().equals("rlm")) {
                rlm = p;
            }
        }
        assertThat(rlm).as(prompts.toString()).isNotNull();
        assertThat(rlm.path("arguments").get(0).path("name").asText()).isEqualTo("task");
        assertThat(rlm.path("arguments").get(0).path("required").asBoolean()).isFalse();

        var get = McpDriver.MAPPER.createObjectNode().put("op", "get_prompt").put("name", "rlm");
        get.putObject("args").put("task", "count the ERROR lines in server.log");
        JsonNode messages = client().request(get).path("result").path("messages");
        assertThat(messages).isNotEmpty();
        String text = messages.get(0).path("content").path("text").asText();
        assertThat(text).contains("count the ERROR lines in server.log", "rlm_finalize", "llm_query", "rlm_load_file");

        var plain = McpDriver.MAPPER.createObjectNode().put("op", "get_prompt").put("name", "rlm");
        assertThat(client().request(plain)
                        .path("result")
                        .path("messages")
                        .get(0)
                        .path("content")
                        .path("text")
                        .asText())
                .contains("rlm_finalize")
                .doesNotContain("Your task");
    }

    @Test
    void executeKeepsStateAndReportsOutputChangesAndErrors() {
        JsonNode first = ok("rlm_execute", Map.of("code", "total = 40\nprint('hello')"));
        assertThat(first.path("status").asText()).isEqualTo("ok");
        assertThat(first.path("stdout").asText()).isEqualTo("hello\n");
        assertThat(first.path("variables_changed").toString()).isEqualTo("[\"total\"]");
        assertThat(first.path("session_id").asText()).startsWith("s-");
        assertThat(ok("rlm_execute", Map.of("code", "total + 2")).path("stdout").asText())
                .isEqualTo("42\n");

        JsonNode failed = client().call("rlm_execute", Map.of("code", "undefined_name"));
        assertThat(failed.path("isError").asBoolean()).isTrue();
        JsonNode error = json(failed).path("error");
        assertThat(error.path("type").asText()).isEqualTo("NameError");
        assertThat(error.path("traceback").asText()).contains("undefined_name").doesNotContain("harness");
        assertThat(ok("rlm_execute", Map.of("code", "total")).path("stdout").asText())
                .isEqualTo("40\n");
    }

    @Test
    void longOutputIsCutAndTheRestCanBePaged() {
        JsonNode reply = ok("rlm_execute", Map.of("code", "for i in range(1000): print(i)"));
        assertThat(reply.path("stdout").asText())
                .contains("characters cut here", "_last_output")
                .hasSizeLessThan(800);
        assertThat(ok("rlm_execute", Map.of("code", "print(_last_output.splitlines()[500])"))
                        .path("stdout")
                        .asText())
                .isEqualTo("500\n");
    }

    @Test
    void loadDataParsesEveryDataType() {
        assertThat(ok("rlm_load_data", Map.of("name", "t", "data", "plain text"))
                        .path("type")
                        .asText())
                .isEqualTo("str");
        assertThat(ok("rlm_load_data", Map.of("name", "l", "data", "a\nERROR b\nERROR c\n", "data_type", "lines"))
                        .path("length")
                        .asInt())
                .isEqualTo(3);
        assertThat(ok("rlm_load_data", Map.of("name", "j", "data", "[1, 2, 3]", "data_type", "json"))
                        .path("type")
                        .asText())
                .isEqualTo("list");
        JsonNode csv = ok("rlm_load_data", Map.of("name", "c", "data", "k,v\na,1\nb,2\n", "data_type", "csv"));
        assertThat(csv.path("columns").toString()).isEqualTo("[\"k\",\"v\"]");
        assertThat(exec("print(len(t), sum('ERROR' in x for x in l), sum(j), c[1]['v'])")
                        .path("stdout")
                        .asText())
                .isEqualTo("10 2 6 2\n");
    }

    @Test
    void loadFileReadsOnlyUnderTheDataRoot() throws Exception {
        // a sandboxed kernel runs as uid 65534: the data root must be readable by others
        Files.setPosixFilePermissions(dataRoot(), java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.writeString(dataRoot().resolve("events.csv"), "id,level\n1,INFO\n2,ERROR\n");
        JsonNode loaded = ok("rlm_load_file", Map.of("name", "events", "path", "events.csv", "data_type", "csv"));
        assertThat(loaded.path("length").asInt()).isEqualTo(2);
        String absolute = dataRoot().resolve("events.csv").toRealPath().toString();
        assertThat(ok("rlm_load_file", Map.of("name", "raw", "path", absolute))
                        .path("type")
                        .asText())
                .isEqualTo("str");
        refused("rlm_load_file", Map.of("name", "x", "path", "../outside.txt"), "PATH_OUTSIDE_DATA_ROOT", "path");
        refused("rlm_load_file", Map.of("name", "x", "path", "/etc/passwd"), "PATH_OUTSIDE_DATA_ROOT", "path");
        refused("rlm_load_file", Map.of("name", "x", "path", "missing.txt"), "FILE_NOT_FOUND", "path");
        assertThat(exec("print(events[1]['level'])").path("stdout").asText()).isEqualTo("ERROR\n");
    }

    @Test
    void variablesCanBeListedDescribedClearedAndMeasured() {
        ok("rlm_execute", Map.of("code", "rows = [{'n': i} for i in range(100)]\nlabel = 'x' * 300"));
        JsonNode vars = ok("rlm_list_vars", Map.of()).path("variables");
        assertThat(vars).extracting(v -> v.path("name").asText()).contains("rows", "label");
        JsonNode info = ok("rlm_var_info", Map.of("name", "rows"));
        assertThat(info.path("type").asText()).isEqualTo("list");
        assertThat(info.path("length").asInt()).isEqualTo(100);
        assertThat(info.path("size_human").asText()).isNotBlank();
        assertThat(info.path("last_accessed").asText()).isNotBlank();
        refused("rlm_var_info", Map.of("name", "nothing_here"), "VARIABLE_NOT_FOUND", "name");
        assertThat(ok("rlm_clear", Map.of("name", "label")).path("cleared").toString())
                .isEqualTo("[\"label\"]");
        refused("rlm_clear", Map.of(), "INVALID_ARGUMENT", "name");
        refused("rlm_clear", Map.of("name", "rows", "all", true), "INVALID_ARGUMENT", "all");
        JsonNode memory = ok("rlm_memory", Map.of());
        assertThat(memory.path("limit_bytes").asLong()).isEqualTo(1024L * 1024 * 1024);
        assertThat(memory.path("rss_bytes").asLong()).isPositive();
        assertThat(memory.path("sandbox").asText()).isIn("bwrap", "process");
        ok("rlm_clear", Map.of("all", true));
        assertThat(ok("rlm_list_vars", Map.of()).path("variables")).isEmpty();
    }

    @Test
    void badArgumentsAreRefusedClearlyAndLoseNothing() {
        ok("rlm_execute", Map.of("code", "precious = [1, 2, 3]"));
        refused("rlm_execute", Map.of(), "INVALID_ARGUMENT", "code");
        refused("rlm_execute", Map.of("code", 5), "INVALID_ARGUMENT", "code");
        refused("rlm_execute", Map.of("code", "1", "timeout", 5), "INVALID_ARGUMENT", "timeout");
        refused("rlm_execute", Map.of("code", "1", "timeout_s", 0), "INVALID_ARGUMENT", "timeout_s");
        refused("rlm_execute", Map.of("code", "1", "session_id", "s-unknown"), "SESSION_NOT_FOUND", "session_id");
        refused("rlm_load_data", Map.of("name", "1bad", "data", "x"), "INVALID_ARGUMENT", "name");
        refused("rlm_load_data", Map.of("name", "import", "data", "x"), "INVALID_ARGUMENT", "name");
        refused(
                "rlm_load_data",
                Map.of("name", "ok_name", "data", "x", "data_type", "yaml"),
                "INVALID_ARGUMENT",
                "data_type");
        refused(
                "rlm_load_data",
                Map.of("name", "precious", "data", "{broken", "data_type", "json"),
                "INVALID_DATA",
                "data");
        JsonNode fix = refused("rlm_load_data", Map.of("name", "x"), "INVALID_ARGUMENT", "data");
        assertThat(fix.path("fix").asText()).isNotBlank();
        assertThat(exec("print(precious)").path("stdout").asText()).isEqualTo("[1, 2, 3]\n");
    }

    @Test
    void aTimeoutInterruptsTheCodeAndKeepsVariables() {
        ok("rlm_execute", Map.of("code", "kept = 'still here'"));
        JsonNode result = client().call(
                        "rlm_execute", Map.of("code", "import time\nwhile True: time.sleep(0.01)", "timeout_s", 1));
        assertThat(result.path("isError").asBoolean()).isTrue();
        JsonNode reply = json(result);
        assertThat(reply.path("status").asText()).isEqualTo("interrupted");
        assertThat(reply.path("message").asText()).contains("variables are intact");
        assertThat(exec("print(kept)").path("stdout").asText()).isEqualTo("still here\n");
    }

    @Test
    void aCrashedKernelIsReportedAndReplacedWithEveryEarlierStep() {
        ok("rlm_execute", Map.of("code", "kept = 1"));
        JsonNode reply = json(client().call("rlm_execute", Map.of("code", "import os\nmade = 2\nos._exit(3)")));
        assertThat(reply.path("status").asText()).isEqualTo("crashed");
        // the earlier step's change was snapshotted before the crashing call ran
        assertThat(reply.path("variables_lost").asBoolean()).isFalse();
        assertThat(reply.path("lost_variables")).isEmpty();
        assertThat(reply.path("message").asText())
                .contains("Nothing newer than the snapshot was lost", "failed call itself");
        assertThat(exec("print(kept)").path("stdout").asText()).isEqualTo("1\n");
        assertThat(exec("print('made' in globals())").path("stdout").asText()).isEqualTo("False\n");
    }
}

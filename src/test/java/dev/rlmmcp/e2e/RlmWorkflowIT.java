package dev.rlmmcp.e2e;

import static dev.rlmmcp.e2e.support.McpDriver.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.RunningServer;
import dev.rlmmcp.e2e.support.ServerProcess;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The RLM tools' workflow through a real client: init, run, get_var, finalize, trace, and the guardrails. */
class RlmWorkflowIT {

    @RegisterExtension
    static final RunningServer server =
            RunningServer.http("--interrupt-grace-ms", "500").connect(s -> McpDriver.http(s.mcpUrl()));

    private static JsonNode ok(String tool, Map<String, ?> args) {
        JsonNode result = server.client().call(tool, args);
        assertThat(result.path("isError").asBoolean())
                .as("%s %s -> %s", tool, args, result)
                .isFalse();
        return json(result);
    }

    private static JsonNode refused(String tool, Map<String, ?> args, String code) {
        JsonNode result = server.client().call(tool, args);
        assertThat(result.path("isError").asBoolean())
                .as("%s -> %s", tool, result)
                .isTrue();
        JsonNode error = json(result).path("error");
        assertThat(error.path("code").asText()).as(error.toString()).isEqualTo(code);
        assertThat(error.path("fix").asText()).isNotBlank();
        return error;
    }

    private static String init(Map<String, ?> args) {
        String id = ok("rlm_init_context", args).path("session_id").asText();
        assertThat(id).startsWith("s-");
        return id;
    }

    @Test
    void initRunGetVarFinalizeAndTrace() {
        JsonNode init =
                ok("rlm_init_context", Map.of("context_text", "b\na\nc\na\n", "data_type", "lines", "max_steps", 10));
        String id = init.path("session_id").asText();
        assertThat(init.path("context").path("length").asInt()).isEqualTo(4);
        assertThat(init.path("limits").path("max_steps").asInt()).isEqualTo(10);
        JsonNode step0 = ok(
                "rlm_run_repl",
                Map.of("session_id", id, "code", "from collections import Counter\ncounts = Counter(context)"));
        assertThat(step0.path("step").asInt()).isZero();
        JsonNode step1 =
                ok("rlm_run_repl", Map.of("session_id", id, "code", "top = counts.most_common(1)[0][0]\nprint(top)"));
        assertThat(step1.path("step").asInt()).isEqualTo(1);
        assertThat(step1.path("stdout").asText()).isEqualTo("a\n");
        JsonNode counts = ok("rlm_get_var", Map.of("session_id", id, "var_name", "counts"));
        assertThat(counts.path("format").asText()).isEqualTo("json");
        assertThat(counts.path("value").asText()).contains("\"a\": 2");
        JsonNode page = ok("rlm_get_var", Map.of("session_id", id, "var_name", "context", "offset", 1, "max_chars", 5));
        assertThat(page.path("returned_chars").asInt()).isEqualTo(5);
        JsonNode done = ok("rlm_finalize", Map.of("session_id", id, "final_var_name", "top"));
        assertThat(done.path("final_answer").asText()).isEqualTo("a");
        assertThat(done.path("state").asText()).isEqualTo("finalized");
        refused("rlm_run_repl", Map.of("session_id", id, "code", "x = 1"), "SESSION_FINALIZED");
        refused("rlm_execute", Map.of("session_id", id, "code", "x = 1"), "SESSION_FINALIZED");
        JsonNode trace = ok("rlm_get_trace", Map.of("session_id", id));
        assertThat(trace.path("final_answer").asText()).isEqualTo("a");
        assertThat(trace.path("steps"))
                .extracting(s -> s.path("kind").asText())
                .containsExactly("load", "exec", "exec", "finalize");
        assertThat(trace.path("steps").path(2).path("input").asText()).contains("most_common");
        assertThat(trace.path("steps").path(2).path("output").asText()).isEqualTo("a\n");
        JsonNode slice = ok("rlm_get_trace", Map.of("session_id", id, "start", 1, "end", 2));
        assertThat(slice.path("steps")).hasSize(1);
        JsonNode listed = ok("rlm_sessions", Map.of());
        assertThat(listed.path("sessions")).anySatisfy(s -> {
            assertThat(s.path("session_id").asText()).isEqualTo(id);
            assertThat(s.path("state").asText()).isEqualTo("finalized");
            assertThat(s.path("steps").asInt()).isEqualTo(2);
        });
    }

    @Test
    void maxStepsFiresExactlyAtItsLimit() {
        String id = init(Map.of("max_steps", 2));
        ok("rlm_run_repl", Map.of("session_id", id, "code", "a = 1"));
        JsonNode second = ok("rlm_run_repl", Map.of("session_id", id, "code", "b = 2"));
        assertThat(second.has("guardrail_stop")).isFalse();
        JsonNode stop = refused("rlm_run_repl", Map.of("session_id", id, "code", "c = 3"), "GUARDRAIL_STOP");
        assertThat(stop.path("message").asText()).contains("max_steps");
        JsonNode summary = ok("rlm_get_trace", Map.of("session_id", id));
        assertThat(summary.path("state").asText()).isEqualTo("stopped");
        assertThat(summary.path("guardrail_stop").asText()).isEqualTo("max_steps");
        assertThat(ok("rlm_finalize", Map.of("session_id", id, "final_text", "partial"))
                        .path("state")
                        .asText())
                .isEqualTo("finalized");
    }

    @Test
    void maxRuntimeStopsOncePassed() {
        String id = init(Map.of("max_runtime_ms", 300));
        JsonNode first = ok("rlm_run_repl", Map.of("session_id", id, "code", "import time\ntime.sleep(0.1)"));
        assertThat(first.has("guardrail_stop")).isFalse();
        JsonNode second = server.client().call("rlm_run_repl", Map.of("session_id", id, "code", "time.sleep(5)"));
        JsonNode reply = json(second);
        assertThat(reply.path("guardrail_stop").asText()).isEqualTo("timeout");
        assertThat(reply.path("status").asText()).isEqualTo("interrupted");
        refused("rlm_run_repl", Map.of("session_id", id, "code", "x = 1"), "GUARDRAIL_STOP");
    }

    @Test
    void budgetCountsCodeOutputAndDataAndStopsOncePassed() {
        String id = init(Map.of("context_text", "0123456789", "budget_limit", 40));
        JsonNode first = ok("rlm_run_repl", Map.of("session_id", id, "code", "print(1)"));
        assertThat(first.has("guardrail_stop")).isFalse();
        JsonNode second = ok("rlm_run_repl", Map.of("session_id", id, "code", "print('x' * 20)"));
        assertThat(second.path("guardrail_stop").asText()).isEqualTo("budget_exceeded");
        refused("rlm_run_repl", Map.of("session_id", id, "code", "x = 1"), "GUARDRAIL_STOP");
        assertThat(ok("rlm_get_trace", Map.of("session_id", id))
                        .path("io_bytes")
                        .asInt())
                .isEqualTo(10 + (8 + 2) + (15 + 21));
    }

    @Test
    void serverDefaultLimitsApplyWhenInitNamesNone() throws Exception {
        try (ServerProcess limited = ServerProcess.http("--max-steps", "1");
                McpDriver other = McpDriver.http(limited.mcpUrl())) {
            JsonNode init = json(other.call("rlm_init_context", Map.of()));
            assertThat(init.path("limits").path("max_steps").asInt()).isEqualTo(1);
            String id = init.path("session_id").asText();
            assertThat(other.call("rlm_run_repl", Map.of("session_id", id, "code", "a = 1"))
                            .path("isError")
                            .asBoolean())
                    .isFalse();
            JsonNode stop = json(other.call("rlm_run_repl", Map.of("session_id", id, "code", "b = 2")));
            assertThat(stop.path("error").path("code").asText()).isEqualTo("GUARDRAIL_STOP");
            JsonNode own = json(other.call("rlm_init_context", Map.of("max_steps", 5)));
            assertThat(own.path("limits").path("max_steps").asInt()).isEqualTo(5);
        }
    }

    @Test
    void theDefaultImportPolicyIsAGuardRailNotASandbox() {
        String id = init(Map.of());
        JsonNode refusedImport =
                json(server.client().call("rlm_run_repl", Map.of("session_id", id, "code", "import os")));
        assertThat(refusedImport.path("error").path("type").asText()).isEqualTo("ImportError");
        assertThat(refusedImport.path("error").path("message").asText())
                .contains("import policy", "not a security boundary", "--blocked-imports");
        assertThat(ok(
                                "rlm_run_repl",
                                Map.of("session_id", id, "code", "import json, re, collections, pathlib\nprint('ok')"))
                        .path("stdout")
                        .asText())
                .isEqualTo("ok\n");
        JsonNode walkedPast = ok(
                "rlm_run_repl",
                Map.of("session_id", id, "code", "print(type(print.__self__.__import__('os')).__name__)"));
        assertThat(walkedPast.path("stdout").asText()).isEqualTo("module\n");
    }

    @Test
    void unknownAndDeletedSessionsAreRefused() {
        refused("rlm_run_repl", Map.of("session_id", "s-nope", "code", "1"), "SESSION_NOT_FOUND");
        refused("rlm_get_trace", Map.of("session_id", "s-nope"), "SESSION_NOT_FOUND");
        refused("rlm_get_var", Map.of("session_id", "s-nope", "var_name", "x"), "SESSION_NOT_FOUND");
        String id = init(Map.of());
        refused("rlm_get_var", Map.of("session_id", id, "var_name", "missing"), "VARIABLE_NOT_FOUND");
        refused("rlm_finalize", Map.of("session_id", id), "INVALID_ARGUMENT");
        assertThat(ok("rlm_delete_session", Map.of("session_id", id))
                        .path("deleted")
                        .asBoolean())
                .isTrue();
        refused("rlm_run_repl", Map.of("session_id", id, "code", "1"), "SESSION_NOT_FOUND");
    }

    @Test
    void replToolsWorkOnNamedSessionsFromAnyConnection() {
        String id = init(Map.of("context_text", "{\"k\": 1}", "data_type", "json", "name", "cfg"));
        try (McpDriver other = McpDriver.http(server.mcpUrl())) {
            JsonNode vars = json(other.call("rlm_list_vars", Map.of("session_id", id)));
            assertThat(vars.path("variables"))
                    .extracting(v -> v.path("name").asText())
                    .containsExactly("cfg");
            assertThat(json(other.call("rlm_execute", Map.of("session_id", id, "code", "cfg['k'] + 1")))
                            .path("stdout")
                            .asText())
                    .isEqualTo("2\n");
        }
    }
}

package dev.rlmmcp.transport.stateless;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.transport.jsonrpc.ServedRequests;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TasksTest {

    private static final Map<String, Object> DECLARED = Map.of(
            StatelessProtocol.META_VERSION,
            "2026-07-28",
            StatelessProtocol.META_CAPABILITIES,
            Map.of("extensions", Map.of(Tasks.EXTENSION, Map.of())));
    private static final Map<String, Object> UNDECLARED =
            Map.of(StatelessProtocol.META_VERSION, "2026-07-28", StatelessProtocol.META_CAPABILITIES, Map.of());

    private final McpJsonMapper mapper = new JacksonMcpJsonMapper(new ObjectMapper());
    private final ServedRequests served = new ServedRequests();
    private final Tasks tasks = new Tasks(mapper);

    /** A call with no SDK session behind it: what it asks and answers is played with {@link ResumableCall#sendMessage}. */
    private ResumableCall call() {
        return new ResumableCall("c1", null, mapper, served.serve("test", 1));
    }

    private McpSchema.JSONRPCResponse request(String method, Map<String, Object> meta, Object... params) {
        Map<String, Object> all = new LinkedHashMap<>();
        for (int i = 0; i < params.length; i += 2) {
            all.put((String) params[i], params[i + 1]);
        }
        all.put("_meta", meta);
        return tasks.handle(new McpSchema.JSONRPCRequest(McpSchema.JSONRPC_VERSION, method, 9, all));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> result(McpSchema.JSONRPCResponse response) {
        assertThat(response.error()).as(String.valueOf(response.error())).isNull();
        return (Map<String, Object>) response.result();
    }

    @Test
    void aTaskIsCreatedFlatAndWorkingThenShowsItsResult() {
        ResumableCall call = call();
        Map<String, Object> created = tasks.adopt(call);
        assertThat(created)
                .containsEntry("resultType", "task")
                .containsEntry("status", "working")
                .containsKeys("taskId", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs")
                .doesNotContainKeys("result", "error", "inputRequests", "requestState", "task");
        assertThat((String) created.get("createdAt")).matches("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}.*");
        String id = (String) created.get("taskId");

        call.sendMessage(McpSchema.JSONRPCResponse.result(
                        1,
                        McpSchema.CallToolResult.builder()
                                .content(List.of(new McpSchema.TextContent("done")))
                                .build()))
                .block();
        Map<String, Object> got = result(request(Tasks.GET, DECLARED, "taskId", id));
        assertThat(got)
                .containsEntry("resultType", "complete")
                .containsEntry("status", "completed")
                .doesNotContainKey("requestState");
        assertThat(got.get("result").toString()).contains("done", "resultType=complete");
        // cancelling a task that has ended is acknowledged, and changes nothing
        assertThat(result(request(Tasks.CANCEL, DECLARED, "taskId", id))).isEqualTo(Map.of("resultType", "complete"));
        assertThat(result(request(Tasks.GET, DECLARED, "taskId", id))).containsEntry("status", "completed");
    }

    @Test
    @SuppressWarnings("unchecked")
    void whatATaskAsksIsShownAndAnsweredKeyByKey() throws Exception {
        ResumableCall call = call();
        String id = (String) tasks.adopt(call).get("taskId");
        call.sendMessage(new McpSchema.JSONRPCRequest(
                        McpSchema.JSONRPC_VERSION,
                        McpSchema.METHOD_ELICITATION_CREATE,
                        "r1",
                        Map.of("message", "first?", "_meta", Map.of(ResumableCall.KEY, "first"))))
                .block();
        call.sendMessage(new McpSchema.JSONRPCRequest(
                        McpSchema.JSONRPC_VERSION,
                        McpSchema.METHOD_ELICITATION_CREATE,
                        "r2",
                        Map.of("message", "second?")))
                .block();
        Thread.sleep(2 * ResumableCall.QUIET_NANOS / 1_000_000);
        Map<String, Object> asking = result(request(Tasks.GET, DECLARED, "taskId", id));
        assertThat(asking).containsEntry("status", "input_required");
        assertThat((Map<String, Object>) asking.get("inputRequests")).containsOnlyKeys("first", "elicitation-2");
        assertThat(asking.get("inputRequests").toString()).doesNotContain(ResumableCall.KEY);

        Map<String, Object> accept = Map.of("action", "accept", "content", Map.of("ok", true));
        assertThat(result(request(
                        Tasks.UPDATE,
                        DECLARED,
                        "taskId",
                        id,
                        "inputResponses",
                        Map.of("first", accept, "unknown", Map.of("ignored", true)))))
                .isEqualTo(Map.of("resultType", "complete"));
        assertThat((Map<String, Object>)
                        result(request(Tasks.GET, DECLARED, "taskId", id)).get("inputRequests"))
                .containsOnlyKeys("elicitation-2");

        McpSchema.JSONRPCResponse invalid =
                request(Tasks.UPDATE, DECLARED, "taskId", id, "inputResponses", Map.of("elicitation-2", 12345));
        assertThat(invalid.error().code()).isEqualTo(McpSchema.ErrorCodes.INVALID_PARAMS);
        assertThat(invalid.error().message()).contains("params.inputResponses.elicitation-2");
        assertThat((Map<String, Object>)
                        result(request(Tasks.GET, DECLARED, "taskId", id)).get("inputRequests"))
                .containsOnlyKeys("elicitation-2");

        assertThat(result(request(Tasks.CANCEL, DECLARED, "taskId", id))).isEqualTo(Map.of("resultType", "complete"));
        assertThat(result(request(Tasks.GET, DECLARED, "taskId", id)))
                .containsEntry("status", "cancelled")
                .doesNotContainKey("inputRequests");
        assertThat(call.served().context().cancelled()).isTrue();
    }

    @Test
    void aWatchHearsEachStatusOnceAsItChanges() throws Exception {
        ResumableCall call = call();
        String id = (String) tasks.adopt(call).get("taskId");
        List<Map<String, Object>> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
        Runnable unwatch = tasks.watch(java.util.Set.of(id, "unknown"), heard::add);
        call.sendMessage(new McpSchema.JSONRPCRequest(
                        McpSchema.JSONRPC_VERSION,
                        McpSchema.METHOD_ELICITATION_CREATE,
                        "r1",
                        Map.of("message", "sure?")))
                .block();
        Thread.sleep(5 * ResumableCall.QUIET_NANOS / 1_000_000);
        tasks.handle(new McpSchema.JSONRPCRequest(
                McpSchema.JSONRPC_VERSION,
                Tasks.UPDATE,
                2,
                Map.of(
                        "taskId",
                        id,
                        "inputResponses",
                        Map.of("elicitation-1", Map.of("action", "accept")),
                        "_meta",
                        DECLARED)));
        call.sendMessage(McpSchema.JSONRPCResponse.result(
                        1,
                        McpSchema.CallToolResult.builder()
                                .content(List.of(new McpSchema.TextContent("done")))
                                .build()))
                .block();
        assertThat(heard)
                .extracting(task -> task.get("status"))
                .containsExactly("working", "input_required", "working", "completed");
        assertThat(heard.get(1)).containsKey("inputRequests");
        unwatch.run();
        assertThat(tasks.known(List.of(id, "unknown"))).containsExactly(id);
    }

    @Test
    void aCallThatEndsInAnErrorIsAFailedTask() {
        ResumableCall call = call();
        String id = (String) tasks.adopt(call).get("taskId");
        call.sendMessage(McpSchema.JSONRPCResponse.error(
                        1, new McpSchema.JSONRPCResponse.JSONRPCError(-32603, "it broke", null)))
                .block();
        Map<String, Object> got = result(request(Tasks.GET, DECLARED, "taskId", id));
        assertThat(got)
                .containsEntry("status", "failed")
                .containsEntry("error", Map.of("code", -32603, "message", "it broke"))
                .doesNotContainKey("result");
    }

    @Test
    void theExtensionMustBeDeclaredBeforeAnyTaskIsLookedUp() {
        McpSchema.JSONRPCResponse refused = request(Tasks.GET, UNDECLARED, "taskId", "gate-test");
        assertThat(refused.error().code()).isEqualTo(StatelessProtocol.MISSING_CLIENT_CAPABILITY);
        assertThat(refused.error().data())
                .isEqualTo(Map.of("requiredCapabilities", Map.of("extensions", Map.of(Tasks.EXTENSION, Map.of()))));
        assertThat(request(Tasks.GET, DECLARED, "taskId", "nonexistent").error().code())
                .isEqualTo(McpSchema.ErrorCodes.INVALID_PARAMS);
        assertThat(request(Tasks.GET, DECLARED).error().message()).contains("params.taskId");
        assertThat(request("tasks/result", DECLARED, "taskId", "x").error().code())
                .isEqualTo(McpSchema.ErrorCodes.METHOD_NOT_FOUND);
        assertThat(request("tasks/list", UNDECLARED).error().code()).isEqualTo(McpSchema.ErrorCodes.METHOD_NOT_FOUND);
    }
}

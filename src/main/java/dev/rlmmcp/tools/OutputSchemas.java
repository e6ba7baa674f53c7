package dev.rlmmcp.tools;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The outputSchema each tool declares for its structuredContent. Clients validate every reply against
 * it, refusals ({@code {"error": {...}}}) included, so each schema is permissive: it describes the
 * properties it knows, requires none and forbids nothing else.
 */
final class OutputSchemas {

    private static final Map<String, Object> ANY_OBJECT = Map.of("type", "object");

    private static final Map<String, Object> EXECUTE = object(
            "status", Map.of("type", "string", "enum", List.of("ok", "error", "interrupted", "killed", "crashed")),
            "session_id", Map.of("type", "string"),
            "stdout", Map.of("type", "string"),
            "stderr", Map.of("type", "string"),
            "error", Map.of("type", List.of("object", "null"),
                    "description", "type, message and traceback when the code raised; code, message, argument and "
                            + "fix when the call was refused"),
            "variables_changed", Map.of("type", "array", "items", Map.of("type", "string")),
            "variables_deleted", Map.of("type", "array", "items", Map.of("type", "string")),
            "duration_ms", Map.of("type", "number"),
            "evicted", Map.of("type", "array", "description",
                    "variables the memory policy moved out: spilled to the snapshot store, or dropped (with the reason)"),
            "not_persisted", Map.of("type", "object",
                    "description", "variables this step made that snapshots cannot hold, each with the reason"),
            "loaded_from_snapshot", Map.of("type", "object",
                    "description", "spilled variables the code used, loaded back before it ran"),
            "lost_variables", Map.of("type", "array", "items", Map.of("type", "string"),
                    "description", "after a kernel death: variables newer than the snapshot, now gone"),
            "kernel_restarted", Map.of("type", "object", "description",
                    "the kernel had died since the last call and was replaced before this one ran: message, "
                            + "lost_variables, snapshot_at, kernel_exit, kernel_restarts"),
            "not_saved", Map.of("type", "array", "items", Map.of("type", "string"), "description",
                    "with --durable-replies: variables this step changed that could not be snapshotted"),
            "memory", Map.of("type", "object"),
            "truncated", Map.of("type", "object", "description", "per stream, how many characters were cut"),
            "message", Map.of("type", "string"),
            "step", Map.of("type", "integer"),
            "guardrail_stop", Map.of("type", "string"),
            "llm_usage", Map.of("type", "object", "description", "what the step's llm_query calls used: backend, "
                    + "calls, failed, refused, input_tokens, output_tokens, latency, guardrail_events"));

    private static final Map<String, Object> LINES = Map.of("type", "array", "items", Map.of("type", "string"));

    private static final Map<String, Object> RUN_PYTHON = object(
            "status", Map.of("type", "string", "enum", List.of("success", "error", "timeout", "validation_error")),
            "summary", Map.of("type", "string"),
            "exitCode", Map.of("type", "integer"),
            "servers", LINES,
            "stdout", LINES,
            "stderr", LINES,
            "error", Map.of("type", List.of("string", "object"),
                    "description", "what failed; an object with code, message, argument and fix when the call was refused"),
            "timeoutSeconds", Map.of("type", "integer"),
            "session_id", Map.of("type", "string"),
            "argument", Map.of("type", "string"),
            "fix", Map.of("type", "string"));

    private OutputSchemas() {
    }

    static Map<String, Object> of(String tool) {
        return switch (tool) {
            case "rlm_execute" -> EXECUTE;
            case "run_python" -> RUN_PYTHON;
            default -> ANY_OBJECT;
        };
    }

    private static Map<String, Object> object(Object... nameThenSchema) {
        Map<String, Object> properties = new LinkedHashMap<>();
        for (int i = 0; i < nameThenSchema.length; i += 2) {
            properties.put((String) nameThenSchema[i], nameThenSchema[i + 1]);
        }
        return Map.of("type", "object", "properties", properties);
    }
}

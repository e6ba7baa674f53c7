package dev.rlmmcp.transport.stateless;

import io.modelcontextprotocol.spec.McpSchema;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the handling of protocol 2026-07-28 needs to know of the tools: which may run as tasks (see
 * {@link Tasks}), which of their arguments a request repeats in an {@code Mcp-Param-*} header (an
 * input schema property's {@code x-mcp-header}), for the server to check (see {@link ParamHeaders}), and which
 * are listed only to a client whose request declares sampling.
 */
public record StatelessTools(
        Map<String, TaskSupport> taskSupport, Map<String, Map<String, String>> paramHeaders, Set<String> needSampling) {

    static final StatelessTools NONE = new StatelessTools(Map.of(), Map.of(), Set.of());

    public StatelessTools {
        taskSupport = Map.copyOf(taskSupport);
        paramHeaders = Map.copyOf(paramHeaders);
        needSampling = Set.copyOf(needSampling);
    }

    /**
     * From the tools' definitions (their x-mcp-header properties), which of them may run as tasks, and which
     * work only for a client that samples.
     */
    public static StatelessTools of(
            List<McpSchema.Tool> tools, Map<String, TaskSupport> taskSupport, Set<String> needSampling) {
        Map<String, Map<String, String>> headers = new LinkedHashMap<>();
        for (McpSchema.Tool tool : tools) {
            if (tool.inputSchema() != null && tool.inputSchema().get("properties") instanceof Map<?, ?> properties) {
                Map<String, String> named = new LinkedHashMap<>();
                properties.forEach((name, schema) -> {
                    if (schema instanceof Map<?, ?> property && property.get("x-mcp-header") instanceof String header) {
                        named.put(String.valueOf(name), header);
                    }
                });
                if (!named.isEmpty()) {
                    headers.put(tool.name(), Map.copyOf(named));
                }
            }
        }
        return new StatelessTools(taskSupport, headers, needSampling);
    }

    /** Whether a call of this tool may run as a task. */
    TaskSupport taskSupport(String tool) {
        return taskSupport.getOrDefault(tool, TaskSupport.FORBIDDEN);
    }
}

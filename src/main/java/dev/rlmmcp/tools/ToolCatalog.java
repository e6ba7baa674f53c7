package dev.rlmmcp.tools;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.ErrorCode;
import dev.rlmmcp.core.RlmException;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.data.DataRoot;
import dev.rlmmcp.tools.repl.ClearTool;
import dev.rlmmcp.tools.repl.ExecuteTool;
import dev.rlmmcp.tools.repl.ListVarsTool;
import dev.rlmmcp.tools.repl.LoadDataTool;
import dev.rlmmcp.tools.repl.LoadFileTool;
import dev.rlmmcp.tools.repl.MemoryTool;
import dev.rlmmcp.tools.repl.VarInfoTool;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MCP tool surface: every tool, and the one path by which any face calls one. Replies are one
 * JSON object in a text content item; refusals are the same, with isError set.
 */
public final class ToolCatalog {

    private static final Logger log = LoggerFactory.getLogger(ToolCatalog.class);

    private final List<RlmTool> tools;
    private final ObjectMapper json;

    public ToolCatalog(List<RlmTool> tools, ObjectMapper json) {
        this.tools = List.copyOf(tools);
        this.json = json;
    }

    public static ToolCatalog standard(Sessions sessions, DataRoot dataRoot) {
        return new ToolCatalog(List.of(
                new ExecuteTool(sessions),
                new LoadDataTool(sessions),
                new LoadFileTool(sessions, dataRoot),
                new ListVarsTool(sessions),
                new VarInfoTool(sessions),
                new ClearTool(sessions),
                new MemoryTool(sessions)), sessions.kernels().json());
    }

    public List<RlmTool> tools() {
        return tools;
    }

    public List<SyncToolSpecification> specifications() {
        return tools.stream().map(this::specification).toList();
    }

    private SyncToolSpecification specification(RlmTool tool) {
        McpSchema.Tool definition = McpSchema.Tool.builder(tool.name(), tool.schema().toMap())
                .description(tool.description())
                .build();
        return SyncToolSpecification.builder()
                .tool(definition)
                .callHandler((exchange, request) -> call(tool, request.arguments(), new Caller(exchange.sessionId())))
                .build();
    }

    /** The single dispatch path: validate, run, render. Never throws. */
    public McpSchema.CallToolResult call(RlmTool tool, Map<String, Object> arguments, Caller caller) {
        try {
            Args args = new Args(tool.name(), arguments, tool.schema().names());
            ObjectNode reply = tool.call(args, caller);
            return render(reply, tool.isError(reply));
        } catch (RlmException e) {
            return render(errorBody(e.code(), e.getMessage(), e.argument(), e.fix()), true);
        } catch (RuntimeException e) {
            log.error("tool {} failed", tool.name(), e);
            return render(errorBody(ErrorCode.INTERNAL_ERROR, "internal error in " + tool.name() + ": " + e,
                    null, "retry; if it persists, report it with the server log"), true);
        }
    }

    private ObjectNode errorBody(ErrorCode code, String message, String argument, String fix) {
        ObjectNode error = json.createObjectNode().put("code", code.name()).put("message", message);
        if (argument != null) {
            error.put("argument", argument);
        }
        if (fix != null) {
            error.put("fix", fix);
        }
        ObjectNode body = json.createObjectNode();
        body.set("error", error);
        return body;
    }

    private McpSchema.CallToolResult render(ObjectNode reply, boolean isError) {
        try {
            return McpSchema.CallToolResult.builder()
                    .content(List.of(new McpSchema.TextContent(null, json.writeValueAsString(reply), null)))
                    .isError(isError)
                    .build();
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}

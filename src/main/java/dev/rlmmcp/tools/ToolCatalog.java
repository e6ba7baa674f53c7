package dev.rlmmcp.tools;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MCP tool surface: every tool, and the one path by which any transport calls one. A reply is one
 * JSON object, written as one text content item: text made for a model by default, or that JSON,
 * Markdown or TOON when the call asks with response_format. No reply carries structuredContent and no
 * tool declares an outputSchema (see {@link #render}). Refusals are the same, with isError set.
 */
public final class ToolCatalog {

    /**
     * The key of the request's {@link CallContext} in the {@link McpTransportContext} a transport gives the
     * SDK with each request, which the SDK hands to the tool handler in its exchange.
     */
    public static final String CALL_CONTEXT = "rlm.callContext";
    /** The transport context's key for the connection whose default session a call uses, where it is not the MCP session's. */
    public static final String CONNECTION = "rlm.connection";

    private static final Logger log = LoggerFactory.getLogger(ToolCatalog.class);

    private final List<RlmTool> tools;
    private final Map<String, Schema> inputSchemas;
    private final ObjectMapper json;
    private final ReplyMemory seen = new ReplyMemory();

    public ToolCatalog(List<RlmTool> tools, ObjectMapper json) {
        this.tools = List.copyOf(tools);
        this.inputSchemas = this.tools.stream()
                .collect(Collectors.toUnmodifiableMap(
                        RlmTool::name, t -> t.schema().responseFormat(t.defaultFormat())));
        this.json = json;
    }

    public List<SyncToolSpecification> specifications() {
        return tools.stream().map(this::specification).toList();
    }

    /** The tools whose calls may run long: REPL steps, loads and uploads, run_python, RLM runs. */
    public List<String> mayRunLong() {
        return tools.stream().map(RlmTool::name).filter(LONG::contains).toList();
    }

    private static final Set<String> LONG = Set.of(
            "rlm_execute",
            "rlm_answer",
            "rlm_run_repl",
            "rlm_load_data",
            "rlm_load_file",
            "rlm_load_url",
            "rlm_upload_url",
            "run_python",
            "rlm_solve");

    /** What tools/list shows of every tool. */
    public List<McpSchema.Tool> definitions() {
        return tools.stream().map(this::definition).toList();
    }

    /** {@code listed} without the tools named in {@code leftOut}. */
    public static McpSchema.ListToolsResult without(McpSchema.ListToolsResult listed, Set<String> leftOut) {
        if (leftOut.isEmpty()) {
            return listed;
        }
        return new McpSchema.ListToolsResult(
                listed.tools().stream()
                        .filter(tool -> !leftOut.contains(tool.name()))
                        .toList(),
                listed.nextCursor(),
                listed.meta());
    }

    /** The tools listed only to a client that samples ({@link RlmTool#needsSampling}). */
    public Set<String> needSampling() {
        return tools.stream().filter(RlmTool::needsSampling).map(RlmTool::name).collect(Collectors.toSet());
    }

    /** The tool with this name, for transports that call tools without MCP framing (/rpc). */
    public Optional<RlmTool> tool(String name) {
        return tools.stream().filter(t -> t.name().equals(name)).findFirst();
    }

    private McpSchema.Tool definition(RlmTool tool) {
        return McpSchema.Tool.builder(tool.name(), inputSchemas.get(tool.name()).toMap())
                .description(tool.description())
                .build();
    }

    private SyncToolSpecification specification(RlmTool tool) {
        return SyncToolSpecification.builder()
                .tool(definition(tool))
                .callHandler((exchange, request) -> {
                    Caller caller =
                            new Caller(connection(exchange), McpSamplingBackend.of(exchange), context(exchange));
                    return ProgressTicker.whileRunning(
                            exchange, request, caller.context(), () -> call(tool, request.arguments(), caller));
                })
                .build();
    }

    /** Whose default session a call without session_id uses: the transport's choice, else the MCP session's. */
    static String connection(McpSyncServerExchange exchange) {
        McpTransportContext transport = exchange.transportContext();
        return transport != null && transport.get(CONNECTION) instanceof String connection
                ? connection
                : exchange.sessionId();
    }

    /** The context the transport created for the request this exchange serves, or {@link CallContext#NONE} without one. */
    static CallContext context(McpSyncServerExchange exchange) {
        McpTransportContext transport = exchange.transportContext();
        return transport != null && transport.get(CALL_CONTEXT) instanceof CallContext context
                ? context
                : CallContext.NONE;
    }

    /** The single dispatch path: validate, run, render. Never throws. */
    public McpSchema.CallToolResult call(RlmTool tool, Map<String, Object> arguments, Caller caller) {
        ResponseFormat format = tool.defaultFormat();
        try {
            format = ResponseFormat.of(arguments == null ? null : arguments.get(ResponseFormat.ARGUMENT), format);
        } catch (RlmException e) {
            return render(tool, refusal(e), format);
        }
        return render(tool, reply(tool, arguments, caller), format);
    }

    /**
     * A tool's reply object before it is written in a format, for a transport that answers the object itself
     * ({@code /rpc}). Never throws.
     */
    public Reply reply(RlmTool tool, Map<String, Object> arguments, Caller caller) {
        try {
            Args args = new Args(
                    tool.name(), arguments, inputSchemas.get(tool.name()).names());
            ObjectNode body = tool.call(args, caller);
            if (!args.ignored().isEmpty()) {
                args.ignored().forEach(body.putArray("ignored_arguments")::add);
            }
            return new Reply(body, tool.isError(body), view(body, args.sessionId() != null, caller));
        } catch (RlmException e) {
            if (e.code() == ErrorCode.SESSION_MOVED) {
                caller.context().markNotServing();
            }
            return refusal(e);
        } catch (RuntimeException e) {
            log.error("tool {} failed", tool.name(), e);
            return new Reply(
                    errorBody(
                            ErrorCode.INTERNAL_ERROR,
                            "internal error in " + tool.name() + " (the server log has the details)",
                            null,
                            "retry; if it persists, report it with the server log"),
                    true,
                    TextRenderer.View.FIRST);
        }
    }

    /** A reply object, whether it reports an error, and what a text rendering of it may leave out. */
    public record Reply(ObjectNode body, boolean isError, TextRenderer.View view) {}

    private Reply refusal(RlmException e) {
        return new Reply(errorBody(e.code(), e.getMessage(), e.argument(), e.fix()), true, TextRenderer.View.FIRST);
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

    /**
     * What a text reply can leave out: the session id once the connection has seen it (unless the call
     * named a session other than its default), and a memory warning already given at this level.
     */
    private TextRenderer.View view(ObjectNode reply, boolean named, Caller caller) {
        String session = reply.path("session_id").asText(null);
        if (session == null) {
            return TextRenderer.View.FIRST;
        }
        boolean first = seen.firstReply(caller.connection(), session);
        int lastBand = seen.swapMemoryBand(caller.connection(), session, TextRenderer.memoryBand(reply));
        return new TextRenderer.View(first || named, lastBand);
    }

    /**
     * One text item, never structuredContent: a client that gets both shows the model the object twice
     * (Codex prints the whole result) or the object instead of the text (Claude Code), and no tool
     * declares an outputSchema that would require it. A JSON reply's text is the object itself.
     */
    private McpSchema.CallToolResult render(RlmTool tool, Reply reply, ResponseFormat format) {
        try {
            String text = switch (format) {
                case TEXT -> TextRenderer.render(tool.name(), reply.body(), reply.view());
                case MARKDOWN -> MarkdownRenderer.render(tool.name(), reply.body());
                case TOON -> "```toon\n" + Toon.encode(reply.body()) + "\n```";
                case JSON -> json.writeValueAsString(reply.body());
            };
            return McpSchema.CallToolResult.builder()
                    .content(List.of(new McpSchema.TextContent(null, text, null)))
                    .isError(reply.isError())
                    .build();
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}

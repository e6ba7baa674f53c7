package dev.rlmmcp.transport.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.ResponseFormat;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.ToolCatalog;
import dev.rlmmcp.transport.jsonrpc.JsonRpc;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * A plain adapter for clients that speak no MCP: {@code POST /rpc {"method": ..., "params": {...}}} calls a tool by name
 * through the same catalog as every MCP transport (or lists them with {@code tools/list}) and answers the
 * tool's JSON reply without MCP framing. Refusals keep their {@code {error:{code, ...}}} body, with an
 * HTTP status that says what kind of failure it is. Calls without a session_id share one default session.
 */
final class PlainRpcServlet extends HttpServlet {

    static final String CONNECTION = "http-rpc";

    private final transient ToolCatalog catalog;
    private final transient ObjectMapper json;
    private final int maxRequestBytes;

    PlainRpcServlet(ToolCatalog catalog, ObjectMapper json, int maxRequestBytes) {
        this.catalog = catalog;
        this.json = json;
        this.maxRequestBytes = maxRequestBytes;
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
        byte[] body = JsonResponse.readBody(request, response, maxRequestBytes);
        if (body == null) {
            return;
        }
        JsonNode envelope = envelope(body, response);
        if (envelope == null) {
            return;
        }
        JsonNode params = envelope.path("params");
        String method = envelope.get("method").asText();
        if (method.equals("tools/list")) {
            ObjectNode list = json.createObjectNode();
            list.set("tools", json.valueToTree(catalog.definitions()));
            write(response, 200, list);
            return;
        }
        Optional<RlmTool> tool = catalog.tool(method);
        if (tool.isEmpty()) {
            refuse(response, 404, "METHOD_NOT_FOUND", "unknown method '" + method + "': use a tool name or tools/list");
            return;
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> arguments = params.isObject() ? json.convertValue(params, Map.class) : new HashMap<>();
        try {
            ResponseFormat.of(arguments.get(ResponseFormat.ARGUMENT), ResponseFormat.JSON);
        } catch (RlmException e) {
            ObjectNode refusal = json.createObjectNode();
            refusal.putObject("error")
                    .put("code", e.code().name())
                    .put("message", e.getMessage())
                    .put("argument", e.argument())
                    .put("fix", e.fix());
            write(response, 400, refusal);
            return;
        }
        // the body is the reply object, whatever format was asked
        CallContext context = CallContext.create();
        SessionOffer.carry(request, context);
        ToolCatalog.Reply reply = catalog.reply(tool.get(), arguments, new Caller(CONNECTION, null, context));
        if (context.notServing()) {
            RoutingFilter.notServingHeaders(response);
        }
        write(response, status(reply), reply.body());
    }

    /** The body as {method, params}, or null after refusing a body of another shape. */
    private JsonNode envelope(byte[] body, HttpServletResponse response) throws IOException {
        JsonNode envelope;
        try {
            envelope = json.readTree(body);
        } catch (IOException e) {
            refuse(response, 400, "PARSE_ERROR", JsonRpc.notJson(e));
            return null;
        }
        String wrong = null;
        if (envelope == null || envelope.isMissingNode() || !envelope.isObject()) {
            wrong = "the body must be a JSON object {\"method\": NAME, \"params\": {...}}, not " + kind(envelope);
        } else if (!envelope.path("method").isTextual()) {
            wrong = envelope.has("method")
                    ? "method must be a string, a tool name or tools/list, not " + kind(envelope.get("method"))
                    : "method is missing: {\"method\": NAME, \"params\": {...}} with a tool name or tools/list";
        } else if (!envelope.path("params").isMissingNode()
                && !envelope.path("params").isNull()
                && !envelope.path("params").isObject()) {
            wrong = "params must be a JSON object of the tool's arguments, not " + kind(envelope.path("params"));
        }
        if (wrong != null) {
            refuse(response, 400, ErrorCode.INVALID_ARGUMENT.name(), wrong);
            return null;
        }
        return envelope;
    }

    private static String kind(JsonNode node) {
        if (node == null || node.isMissingNode()) {
            return "an empty body";
        }
        return switch (node.getNodeType()) {
            case ARRAY -> "an array";
            case OBJECT -> "an object";
            case STRING -> "a string";
            case NUMBER -> "a number";
            case BOOLEAN -> "a boolean";
            case NULL -> "null";
            default -> "another value";
        };
    }

    /** A refusal's HTTP status from its error code; a result (even code that raised) is 200. */
    static int status(ToolCatalog.Reply reply) {
        JsonNode body = reply.body();
        if (!reply.isError() || !body.path("error").path("code").isTextual()) {
            return 200;
        }
        return switch (ErrorCode.of(body.path("error").path("code").asText())) {
            case INVALID_ARGUMENT, INVALID_DATA, TOO_LARGE, PATH_OUTSIDE_DATA_ROOT -> 400;
            case PERMISSION_DENIED -> 403;
            case SESSION_NOT_FOUND, VARIABLE_NOT_FOUND, FILE_NOT_FOUND -> 404;
            case INTERNAL_ERROR -> 500;
            case KERNEL_UNAVAILABLE, CAPACITY, SESSION_MOVED -> 503;
            default -> 409;
        };
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setHeader("Allow", "POST");
        if (request.getContentLengthLong() != 0) {
            response.setHeader("Connection", "close");
        }
        refuse(response, 405, "METHOD_NOT_ALLOWED", "POST {method, params} to /rpc");
    }

    @Override
    protected void doPut(HttpServletRequest request, HttpServletResponse response) throws IOException {
        doGet(request, response);
    }

    @Override
    protected void doDelete(HttpServletRequest request, HttpServletResponse response) throws IOException {
        doGet(request, response);
    }

    private void refuse(HttpServletResponse response, int status, String code, String message) throws IOException {
        ObjectNode body = json.createObjectNode();
        body.putObject("error").put("code", code).put("message", message);
        write(response, status, body);
    }

    private void write(HttpServletResponse response, int status, JsonNode body) throws IOException {
        JsonResponse.write(response, status, json.writeValueAsBytes(body));
    }
}

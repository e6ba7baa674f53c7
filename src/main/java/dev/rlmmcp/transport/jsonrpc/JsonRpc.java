package dev.rlmmcp.transport.jsonrpc;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * JSON-RPC framing shared by the transports: reading a message from bytes with its envelope checked,
 * and error answers. A message that is not JSON, not a JSON-RPC 2.0 message, or whose params do not
 * have the shape MCP gives them is refused here, before the SDK sees it, with the JSON-RPC code for
 * it and a message that names the field in the protocol's words (never a Java type: the SDK would
 * answer most of these -32603 with Jackson's text).
 */
public final class JsonRpc {

    private JsonRpc() {}

    /** Messages from this size on have their long strings decoded by {@link LargeStrings}. */
    private static final int LARGE_MESSAGE = 1 << 20;

    /**
     * A message refused before the SDK sees it: the JSON-RPC error to answer, with the request's id
     * when it has a usable one. {@code answerable} is false for a notification or a response, which
     * JSON-RPC never answers (stdio stays silent; HTTP still refuses the POST with 400).
     */
    public static final class Refused extends Exception {

        private final transient Object id;
        private final int code;
        private final boolean answerable;

        Refused(int code, String message, Object id, boolean answerable) {
            super(message, null, false, false);
            this.code = code;
            this.id = id;
            this.answerable = answerable;
        }

        public int code() {
            return code;
        }

        public Object id() {
            return id;
        }

        public boolean answerable() {
            return answerable;
        }

        /** The JSON-RPC error answer. */
        public Map<String, Object> answer() {
            return error(id, code, getMessage());
        }
    }

    public static McpSchema.JSONRPCMessage parse(McpJsonMapper mapper, byte[] json) throws Refused {
        return parse(mapper, json, 0, json.length);
    }

    /**
     * Like McpSchema.deserializeJsonRpcMessage, but from bytes (a large message is not copied into
     * a String first), with the long strings of a large message decoded by {@link LargeStrings}, and
     * with the envelope checked: anything that is not a well-formed message is {@link Refused}.
     */
    public static McpSchema.JSONRPCMessage parse(McpJsonMapper mapper, byte[] bytes, int offset, int length)
            throws Refused {
        Object tree;
        try {
            tree = read(mapper, bytes, offset, length);
        } catch (IOException | RuntimeException e) {
            throw new Refused(McpSchema.ErrorCodes.PARSE_ERROR, notJson(e), null, true);
        }
        return message(mapper, tree);
    }

    private static Object read(McpJsonMapper mapper, byte[] bytes, int offset, int length) throws IOException {
        if (length >= LARGE_MESSAGE) {
            LargeStrings lifted = LargeStrings.lift(new String(bytes, offset, length, StandardCharsets.UTF_8));
            if (lifted != null) {
                return lifted.restore(mapper.readValue(lifted.json(), Object.class));
            }
        }
        byte[] json =
                offset == 0 && length == bytes.length ? bytes : Arrays.copyOfRange(bytes, offset, offset + length);
        return mapper.readValue(json, Object.class);
    }

    /** The message a parsed JSON value is, or why it is none. */
    static McpSchema.JSONRPCMessage message(McpJsonMapper mapper, Object tree) throws Refused {
        if (!(tree instanceof Map<?, ?> map)) {
            throw invalid(
                    null,
                    tree instanceof List<?> list
                            ? list.isEmpty()
                                    ? "an empty JSON array is not a JSON-RPC message"
                                    : "JSON-RPC batches (an array of messages) are not supported: send one message per request"
                            : "a JSON-RPC message must be a JSON object, not " + describe(tree));
        }
        boolean hasId = map.containsKey("id");
        Object id = map.get("id");
        Object usableId = id instanceof String || id instanceof Integer || id instanceof Long ? id : null;
        boolean response = !map.containsKey("method") && (map.containsKey("result") || map.containsKey("error"));
        Object version = map.get("jsonrpc");
        if (!McpSchema.JSONRPC_VERSION.equals(version)) {
            throw new Refused(
                    McpSchema.ErrorCodes.INVALID_REQUEST,
                    version == null && !map.containsKey("jsonrpc")
                            ? "jsonrpc is missing: it must be \"2.0\""
                            : "jsonrpc must be \"2.0\", not " + describe(version),
                    response ? null : usableId,
                    !response);
        }
        if (hasId && usableId == null && !response) {
            throw invalid(
                    null,
                    id == null
                            ? "id must not be null: a request needs a string or integer id, and a "
                                    + "notification has no id at all"
                            : "id must be a string or an integer, not " + describe(id));
        }
        if (map.containsKey("method")) {
            return requestOrNotification(map, hasId, id, usableId);
        }
        if (response) {
            return response(mapper, map, usableId);
        }
        throw invalid(
                usableId,
                "method is missing: a request or notification needs a method (a response needs a "
                        + "result or an error)");
    }

    /** A message with a method: a request when it has an id, else a notification; or why it is neither. */
    private static McpSchema.JSONRPCMessage requestOrNotification(
            Map<?, ?> map, boolean hasId, Object id, Object usableId) throws Refused {
        if (!(map.get("method") instanceof String method) || method.isEmpty()) {
            throw invalid(usableId, "method must be a non-empty string, not " + describe(map.get("method")));
        }
        Object params = map.get("params");
        String bad = badParams(method, params);
        if (bad != null) {
            throw new Refused(McpSchema.ErrorCodes.INVALID_PARAMS, bad, usableId, hasId);
        }
        return hasId
                ? new McpSchema.JSONRPCRequest(McpSchema.JSONRPC_VERSION, method, id, params)
                : new McpSchema.JSONRPCNotification(McpSchema.JSONRPC_VERSION, method, params);
    }

    /** A client's response (to a request of the server's), or why it is none: never answered, as JSON-RPC says. */
    private static McpSchema.JSONRPCResponse response(McpJsonMapper mapper, Map<?, ?> map, Object usableId)
            throws Refused {
        if (usableId == null) {
            throw new Refused(
                    McpSchema.ErrorCodes.INVALID_REQUEST,
                    "a response needs the string or integer id of the request it answers",
                    null,
                    false);
        }
        if (map.get("error") != null
                && !(map.get("error") instanceof Map<?, ?> error
                        && error.get("code") instanceof Integer
                        && error.get("message") instanceof String)) {
            throw new Refused(
                    McpSchema.ErrorCodes.INVALID_REQUEST,
                    "error must be an object with an integer code and a string message",
                    null,
                    false);
        }
        try {
            return mapper.convertValue(map, McpSchema.JSONRPCResponse.class);
        } catch (RuntimeException e) {
            throw new Refused(McpSchema.ErrorCodes.INVALID_REQUEST, "not a JSON-RPC response", null, false);
        }
    }

    private static Refused invalid(Object id, String message) {
        return new Refused(McpSchema.ErrorCodes.INVALID_REQUEST, message, id, true);
    }

    /**
     * Why a method's params cannot be right, or null if they may be: MCP params are always an object
     * (absent or null reads as none), {@code _meta} an object whose progressToken is a string or a
     * number, and the fields the SDK would otherwise fail to convert (with Java's words) have their
     * JSON types.
     */
    static String badParams(String method, Object params) {
        if (params == null) {
            return method.equals(McpSchema.METHOD_TOOLS_CALL)
                    ? "params is missing: tools/call needs " + "{\"name\": TOOL, \"arguments\": {...}}"
                    : null;
        }
        if (!(params instanceof Map<?, ?> p)) {
            return "params of " + method + " must be a JSON object, not " + describe(params);
        }
        String badMeta = badMeta(p.get("_meta"));
        if (badMeta != null) {
            return badMeta;
        }
        return switch (method) {
            case McpSchema.METHOD_TOOLS_CALL -> badToolsCallParams(p);
            case McpSchema.METHOD_INITIALIZE -> badInitializeParams(p);
            case McpSchema.METHOD_TOOLS_LIST,
                    McpSchema.METHOD_PROMPT_LIST,
                    McpSchema.METHOD_RESOURCES_LIST,
                    McpSchema.METHOD_RESOURCES_TEMPLATES_LIST ->
                p.get("cursor") == null || p.get("cursor") instanceof String
                        ? null
                        : "params.cursor must be a string, not " + describe(p.get("cursor"));
            default -> null;
        };
    }

    /** Why params._meta cannot be right, or null if it may be (absent, or an object with a usable progressToken). */
    private static String badMeta(Object meta) {
        if (meta == null) {
            return null;
        }
        if (!(meta instanceof Map<?, ?> m)) {
            return "params._meta must be a JSON object, not " + describe(meta);
        }
        Object token = m.get("progressToken");
        if (token != null && !(token instanceof String) && !(token instanceof Number)) {
            return "params._meta.progressToken must be a string or a number, not " + describe(token);
        }
        return null;
    }

    /** Why the params object of tools/call cannot be right (its name and arguments), or null if it may be. */
    private static String badToolsCallParams(Map<?, ?> p) {
        Object name = p.get("name");
        if (!(name instanceof String)) {
            return name == null
                    ? "params.name is missing: the name of the tool to call (tools/list names them)"
                    : "params.name must be a string, the name of a tool, not " + describe(name);
        }
        Object arguments = p.get("arguments");
        return arguments == null || arguments instanceof Map<?, ?>
                ? null
                : "params.arguments must be a JSON object of the tool's arguments, not " + describe(arguments);
    }

    /** Why the params object of initialize cannot be right, or null if it may be. */
    private static String badInitializeParams(Map<?, ?> p) {
        Object version = p.get("protocolVersion");
        if (!(version instanceof String)) {
            return version == null
                    ? "params.protocolVersion is missing: the MCP version the client speaks"
                    : "params.protocolVersion must be a string such as \"2025-06-18\", not " + describe(version);
        }
        return notAnObject(p, "capabilities", "clientInfo");
    }

    private static String notAnObject(Map<?, ?> params, String... names) {
        for (String name : names) {
            Object value = params.get(name);
            if (value != null && !(value instanceof Map<?, ?>)) {
                return "params." + name + " must be a JSON object, not " + describe(value);
            }
        }
        return null;
    }

    /** A JSON value as a message names it: its type, and a short scalar's value. */
    static String describe(Object value) {
        return switch (value) {
            case null -> "null";
            case String s -> "the string \"" + shorten(s, 40) + "\"";
            case Boolean b -> b.toString();
            case Number n -> "the number " + shorten(number(n), 24);
            case List<?> l -> "an array";
            case Map<?, ?> m -> "an object";
            default -> "a value of another type";
        };
    }

    private static String number(Number n) {
        return n instanceof BigDecimal d ? d.toString() : n instanceof BigInteger i ? i.toString() : String.valueOf(n);
    }

    private static String shorten(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max) + "...";
    }

    /** What is wrong with a body that is not JSON, in JSON's terms rather than the parser's. */
    public static String notJson(Exception e) {
        if (e instanceof StreamConstraintsException limit) {
            String what = String.valueOf(limit.getOriginalMessage()).toLowerCase(Locale.ROOT);
            return "not accepted as JSON: "
                    + (what.contains("nesting depth")
                            ? "nested more than 1000 levels deep"
                            : what.contains("number")
                                    ? "a number longer than 1000 digits"
                                    : what.contains("name")
                                            ? "a member name too long"
                                            : what.contains("string")
                                                    ? "a string too long"
                                                    : "larger than the parser's limits");
        }
        if (e instanceof JsonProcessingException json && !(e instanceof JsonMappingException)) {
            String where = "";
            JsonLocation at = json.getLocation();
            if (at != null && at.getLineNr() > 0) {
                where = " at line " + at.getLineNr() + ", column " + at.getColumnNr();
            }
            String what = json.getOriginalMessage();
            what = what == null ? "" : what.lines().findFirst().orElse("");
            int aside = what.indexOf(" (");
            if (aside > 0 && !clean(what)) {
                what = what.substring(0, aside);
            }
            return "not valid JSON" + where + (clean(what) && !what.isBlank() ? ": " + shorten(what, 160) : "");
        }
        return "not valid JSON: the body is empty or holds no JSON value";
    }

    /**
     * An SDK conversion failure (params of the wrong shape for their method) in the protocol's words:
     * the field by its path under params and the JSON type it must have.
     */
    public static String mismatch(IllegalArgumentException e) {
        Throwable cause = e;
        while (cause != null && !(cause instanceof JsonMappingException)) {
            cause = cause.getCause();
        }
        if (!(cause instanceof JsonMappingException mapping)) {
            return "params do not match the MCP schema of this method";
        }
        StringBuilder field = new StringBuilder("params");
        for (JsonMappingException.Reference step : mapping.getPath()) {
            if (step.getFieldName() != null) {
                field.append('.').append(step.getFieldName());
            } else if (step.getIndex() >= 0) {
                field.append('[').append(step.getIndex()).append(']');
            }
        }
        if (mapping instanceof MismatchedInputException input && input.getTargetType() != null) {
            return field + " must be " + jsonType(input.getTargetType());
        }
        return field + " does not match the MCP schema of this method";
    }

    private static String jsonType(Class<?> type) {
        if (CharSequence.class.isAssignableFrom(type) || type == char.class || type == Character.class) {
            return "a string";
        }
        if (type == boolean.class || type == Boolean.class) {
            return "true or false";
        }
        if (type == int.class
                || type == long.class
                || type == short.class
                || type == Integer.class
                || type == Long.class
                || type == Short.class
                || type == BigInteger.class) {
            return "an integer";
        }
        if (type.isPrimitive() || Number.class.isAssignableFrom(type)) {
            return "a number";
        }
        if (type.isArray() || Collection.class.isAssignableFrom(type)) {
            return "a JSON array";
        }
        if (type.isEnum()) {
            return "one of the values the MCP schema allows";
        }
        return "a JSON object";
    }

    /** Words that mark Java's own text (class names, exceptions, stack frames): never sent to a client. */
    private static final Pattern INTERNALS = Pattern.compile(
            "java\\.|javax\\.|jakarta\\.|jackson|fasterxml|modelcontextprotocol|reactor\\.|dev\\.rlmmcp|LinkedHashMap|"
                    + "Exception|\\tat |\\$|`",
            Pattern.CASE_INSENSITIVE);

    /** Whether a text is free of Java's own words. */
    public static boolean clean(String text) {
        return text != null && !INTERNALS.matcher(text).find();
    }

    /** The error answer to {@code call}. */
    public static McpSchema.JSONRPCResponse errorAnswer(McpSchema.JSONRPCRequest call, int code, String message) {
        return McpSchema.JSONRPCResponse.error(
                call.id(), new McpSchema.JSONRPCResponse.JSONRPCError(code, message, null));
    }

    /** An error answer; unlike the SDK's response record it allows the null id JSON-RPC uses for unreadable requests. */
    public static Map<String, Object> error(Object id, int code, String message) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("jsonrpc", McpSchema.JSONRPC_VERSION);
        body.put("id", id);
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("code", code);
        error.put("message", message);
        body.put("error", error);
        return body;
    }

    /**
     * The message as sent to a client: the SDK puts the messages of a whole exception chain into an
     * error's data, and a Java exception's message into the error's message; clients get the code, a
     * message in the protocol's words, and data only when it is a short plain text.
     */
    public static McpSchema.JSONRPCMessage withoutTraces(McpSchema.JSONRPCMessage message) {
        if (!(message instanceof McpSchema.JSONRPCResponse response) || response.error() == null) {
            return message;
        }
        McpSchema.JSONRPCResponse.JSONRPCError error = response.error();
        // text data is the SDK's chain of exception messages; structured data is what a handler meant to send
        Object data = error.data() instanceof String s ? s.length() <= 200 && clean(s) ? s : null : error.data();
        String text = clean(error.message()) ? error.message() : generic(error.code());
        if (error.code() == McpSchema.ErrorCodes.INVALID_PARAMS
                && data instanceof String s
                && s.startsWith(UNKNOWN_TOOL_DATA)) {
            // the SDK's message is the specification's example text; its data names the tool asked for
            text = "Unknown tool: \"" + s.substring(UNKNOWN_TOOL_DATA.length()) + "\" (params.name); tools/list "
                    + "names this server's tools";
            data = null;
        }
        if (text.equals(error.message()) && data == error.data()) {
            return message;
        }
        return McpSchema.JSONRPCResponse.error(
                response.id(), new McpSchema.JSONRPCResponse.JSONRPCError(error.code(), text, data));
    }

    private static final String UNKNOWN_TOOL_DATA = "Tool not found: ";

    private static String generic(int code) {
        return switch (code) {
            case McpSchema.ErrorCodes.PARSE_ERROR -> "not valid JSON";
            case McpSchema.ErrorCodes.INVALID_REQUEST -> "not a valid JSON-RPC request";
            case McpSchema.ErrorCodes.METHOD_NOT_FOUND -> "method not found";
            case McpSchema.ErrorCodes.INVALID_PARAMS -> "params do not match the MCP schema of this method";
            default -> "internal error; the server log has the details";
        };
    }

    /** The SDK's JSON-RPC error in an exception's causes, or null. */
    public static McpError protocolError(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof McpError error && error.getJsonRpcError() != null) {
                return error;
            }
        }
        return null;
    }

    /**
     * The error a request is answered with when its handling threw {@code e}: the SDK's JSON-RPC error
     * among its causes, else an internal error.
     */
    public static McpSchema.JSONRPCResponse.JSONRPCError failure(RuntimeException e) {
        McpError error = protocolError(e);
        return error != null
                ? error.getJsonRpcError()
                : new McpSchema.JSONRPCResponse.JSONRPCError(
                        McpSchema.ErrorCodes.INTERNAL_ERROR, internalError(e), null);
    }

    /** What a client is told of an internal error: its message when that is plain, else where to look. */
    public static String internalError(Exception e) {
        return clean(e.getMessage()) ? "internal error: " + brief(e) : "internal error; the server log has the details";
    }

    /** A parser's complaint in one line, without Jackson's source excerpt. */
    static String brief(Exception e) {
        String message = String.valueOf(e.getMessage());
        int cut = message.indexOf("\n");
        message = cut < 0 ? message : message.substring(0, cut);
        return message.length() > 200 ? message.substring(0, 200) + "..." : message;
    }
}

package dev.rlmmcp.transport.stateless;

import dev.rlmmcp.tools.ToolCatalog;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import io.modelcontextprotocol.spec.ProtocolVersions;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * The MCP revision 2026-07-28 on the Streamable HTTP endpoint: no initialize and no MCP session. Every
 * request names its protocol version in the {@code MCP-Protocol-Version} header and, with the client's
 * capabilities, in its {@code _meta}; {@code Mcp-Method} (and {@code Mcp-Name} where the request names a
 * tool, prompt, resource or task, and {@code Mcp-Param-*} where a tool's schema asks) repeat what the body
 * says. This class checks all that, answers {@code server/discover}, and dresses every result as the
 * revision asks ({@code resultType}, the server's identity in {@code _meta}, cache hints on list and read
 * results, the tools' task support). The methods themselves are served by the same SDK server features as
 * every earlier revision, through an SDK session per set of client capabilities that never ends: it holds
 * nothing of a client. What a handler asks the client comes back as input_required results
 * ({@link InputRounds}); long calls may become tasks ({@link Tasks}).
 */
final class StatelessProtocol {

    static final String VERSION = "2026-07-28";
    static final List<String> VERSIONS = List.of(VERSION);

    static final String META_VERSION = "io.modelcontextprotocol/protocolVersion";
    static final String META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
    static final String META_CLIENT = "io.modelcontextprotocol/clientInfo";
    static final String META_SERVER = "io.modelcontextprotocol/serverInfo";
    static final String META_LOG_LEVEL = "io.modelcontextprotocol/logLevel";

    static final int HEADER_MISMATCH = -32020;
    static final int MISSING_CLIENT_CAPABILITY = -32021;
    static final int UNSUPPORTED_VERSION = -32022;

    static final String METHOD_DISCOVER = "server/discover";
    static final String VERSION_HEADER = "MCP-Protocol-Version";
    static final String METHOD_HEADER = "Mcp-Method";
    static final String NAME_HEADER = "Mcp-Name";

    /** Methods of the earlier revisions that 2026-07-28 removed: answered as unknown methods. */
    private static final Set<String> REMOVED = Set.of(
            McpSchema.METHOD_INITIALIZE,
            McpSchema.METHOD_PING,
            McpSchema.METHOD_LOGGING_SET_LEVEL,
            McpSchema.METHOD_RESOURCES_SUBSCRIBE,
            McpSchema.METHOD_RESOURCES_UNSUBSCRIBE);
    /** Results a client may cache, with the hints the revision asks for. */
    private static final Set<String> CACHEABLE = Set.of(
            METHOD_DISCOVER,
            McpSchema.METHOD_TOOLS_LIST,
            McpSchema.METHOD_PROMPT_LIST,
            McpSchema.METHOD_RESOURCES_LIST,
            McpSchema.METHOD_RESOURCES_TEMPLATES_LIST,
            McpSchema.METHOD_RESOURCES_READ);

    private static final int MAX_SESSIONS = 32;

    private final McpJsonMapper mapper;
    private final Map<String, McpStreamableServerSession> sessions = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, McpStreamableServerSession> eldest) {
            return size() > MAX_SESSIONS;
        }
    };
    private McpStreamableServerSession.Factory factory;
    private volatile McpSchema.InitializeResult server;
    private final StatelessTools tools;

    StatelessProtocol(McpJsonMapper mapper, StatelessTools tools) {
        this.mapper = mapper;
        this.tools = tools;
    }

    /** Whether this request's calls may run as a task: a call of a tool that says so; anything else never. */
    TaskSupport taskSupport(McpSchema.JSONRPCRequest call) {
        return McpSchema.METHOD_TOOLS_CALL.equals(call.method())
                        && call.params() instanceof Map<?, ?> params
                        && params.get("name") instanceof String name
                ? tools.taskSupport(name)
                : TaskSupport.FORBIDDEN;
    }

    void setSessionFactory(McpStreamableServerSession.Factory factory) {
        this.factory = factory;
    }

    /** Whether a request with this header (null when absent) and message is one of this revision. */
    static boolean claims(String headerVersion, McpSchema.JSONRPCMessage message) {
        if (headerVersion != null) {
            return claimsHeader(headerVersion);
        }
        Map<String, Object> meta = meta(message);
        return meta != null && meta.get(META_VERSION) instanceof String v && VERSIONS.contains(v);
    }

    /** Whether the MCP-Protocol-Version header (null when absent) names this revision. */
    static boolean claimsHeader(String headerVersion) {
        return headerVersion != null && VERSIONS.contains(headerVersion.strip());
    }

    /** The refusal of a request for a method this revision removed, or null if the body asks for none. */
    Refusal removedMethod(byte[] body) {
        try {
            if (mapper.readValue(body, Object.class) instanceof Map<?, ?> request
                    && request.get("method") instanceof String method
                    && REMOVED.contains(method)) {
                return removed(method);
            }
        } catch (IOException | RuntimeException e) {
            return null;
        }
        return null;
    }

    private static Refusal removed(String method) {
        return new Refusal(
                404,
                McpSchema.ErrorCodes.METHOD_NOT_FOUND,
                "method not found: " + method + " is not part of protocol " + VERSION,
                null);
    }

    /** Whether the client that sent {@code call} declares sampling in it. */
    static boolean samples(McpSchema.JSONRPCMessage call) {
        return StatelessServer.declaresSampling(meta(call));
    }

    /** The request's _meta, or null. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> meta(McpSchema.JSONRPCMessage message) {
        Object params = switch (message) {
            case McpSchema.JSONRPCRequest r -> r.params();
            case McpSchema.JSONRPCNotification n -> n.params();
            default -> null;
        };
        return params instanceof Map<?, ?> p && p.get("_meta") instanceof Map<?, ?> m ? (Map<String, Object>) m : null;
    }

    /**
     * What is wrong with this request's headers (looked up by name, case-insensitively) and _meta, as the
     * error to answer with (its HTTP status in {@link Refusal#status}), or null when it may be served.
     */
    Refusal check(UnaryOperator<String> headers, McpSchema.JSONRPCRequest call) {
        String header = headers.apply(VERSION_HEADER);
        Refusal methodMismatch = methodHeaderMismatch(headers, call);
        if (methodMismatch != null) {
            return methodMismatch;
        }
        String named = named(call);
        if (named != null) {
            String name = stripped(headers.apply(NAME_HEADER));
            if (!named.equals(name)) {
                return new Refusal(
                        400,
                        HEADER_MISMATCH,
                        name == null
                                ? "the " + NAME_HEADER + " header is missing; it " + "must repeat " + named
                                : "the " + NAME_HEADER + " header (" + name + ") does not match the " + "request's "
                                        + named,
                        null);
            }
        }
        if (McpSchema.METHOD_TOOLS_CALL.equals(call.method())
                && call.params() instanceof Map<?, ?> params
                && tools.paramHeaders().get(named) instanceof Map<String, String> repeated) {
            String mismatch =
                    ParamHeaders.mismatch(repeated, params.get("arguments") instanceof Map<?, ?> a ? a : null, headers);
            if (mismatch != null) {
                return new Refusal(400, HEADER_MISMATCH, mismatch, null);
            }
        }
        Refusal refusal = check(call);
        Object version = refusal == null ? meta(call).get(META_VERSION) : null;
        if (version != null && !version.equals(header == null ? null : header.strip())) {
            return new Refusal(
                    400,
                    HEADER_MISMATCH,
                    "the " + VERSION_HEADER + " header (" + header + ") does not match params._meta " + META_VERSION
                            + " (" + version + ")",
                    null);
        }
        return refusal;
    }

    /** Why the method header does not repeat the request's method (absent or different), or null when it does. */
    private static Refusal methodHeaderMismatch(UnaryOperator<String> headers, McpSchema.JSONRPCRequest call) {
        String method = stripped(headers.apply(METHOD_HEADER));
        if (method == null) {
            return new Refusal(
                    400,
                    HEADER_MISMATCH,
                    "the " + METHOD_HEADER + " header is missing; it must repeat the " + "request's method ("
                            + call.method() + ")",
                    null);
        }
        if (!method.equals(call.method())) {
            return new Refusal(
                    400,
                    HEADER_MISMATCH,
                    "the " + METHOD_HEADER + " header (" + method + ") does not match " + "the request's method ("
                            + call.method() + ")",
                    null);
        }
        return null;
    }

    /**
     * What is wrong with a request of this revision that comes without headers (on stdio): its _meta lacks
     * the version or the client's capabilities, or it asks for a removed method; null when it may be served.
     */
    Refusal check(McpSchema.JSONRPCRequest call) {
        Map<String, Object> meta = meta(call);
        List<String> missing = meta == null
                ? List.of("_meta")
                : List.of(META_VERSION, META_CAPABILITIES).stream()
                        .filter(key -> !(meta.get(key) instanceof String || meta.get(key) instanceof Map))
                        .toList();
        if (!missing.isEmpty()) {
            return new Refusal(
                    400,
                    McpSchema.ErrorCodes.INVALID_PARAMS,
                    "params._meta must hold " + META_VERSION
                            + " and " + META_CAPABILITIES + " on every request of protocol " + VERSION + "; missing: "
                            + String.join(", ", missing),
                    null);
        }
        if (REMOVED.contains(call.method())) {
            return removed(call.method());
        }
        return null;
    }

    /** The unsupported-version answer, for any revision: the versions this server speaks and the one asked for. */
    static Refusal unsupported(String requested, List<String> supported) {
        return new Refusal(
                400,
                UNSUPPORTED_VERSION,
                "unsupported protocol version " + requested + "; this server " + "speaks "
                        + String.join(", ", supported),
                Map.of("supported", supported, "requested", requested));
    }

    /** The SDK session that serves requests from clients with these capabilities. */
    synchronized McpStreamableServerSession session(McpSchema.JSONRPCRequest call) {
        Object declared = meta(call).get(META_CAPABILITIES);
        String key = String.valueOf(declared);
        McpStreamableServerSession session = sessions.get(key);
        if (session == null) {
            McpSchema.ClientCapabilities capabilities =
                    mapper.convertValue(declared, new TypeRef<McpSchema.ClientCapabilities>() {});
            Object client = meta(call).get(META_CLIENT);
            McpSchema.Implementation info = client instanceof Map<?, ?>
                    ? mapper.convertValue(client, new TypeRef<McpSchema.Implementation>() {})
                    : new McpSchema.Implementation("stateless-http", "1");
            McpStreamableServerSession.McpStreamableServerSessionInit started = factory.startSession(
                    new McpSchema.InitializeRequest(ProtocolVersions.MCP_2025_11_25, capabilities, info));
            McpSchema.InitializeResult result = started.initResult().block();
            started.session()
                    .accept(new McpSchema.JSONRPCNotification(
                            McpSchema.JSONRPC_VERSION, McpSchema.METHOD_NOTIFICATION_INITIALIZED, null))
                    .block();
            session = started.session();
            sessions.put(key, session);
            if (server == null) {
                server = result;
            }
        }
        return session;
    }

    /** The answer to server/discover. */
    Map<String, Object> discover(McpSchema.JSONRPCRequest call, List<String> supported) {
        McpSchema.InitializeResult info = serverInfo(call);
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("supportedVersions", supported);
        Map<String, Object> capabilities = withoutSubscriptions(info.capabilities());
        capabilities.put("extensions", Map.of(Tasks.EXTENSION, Map.of()));
        result.put("capabilities", capabilities);
        result.put("serverInfo", info.serverInfo());
        if (info.instructions() != null) {
            result.put("instructions", info.instructions());
        }
        return dressed(call.method(), result);
    }

    /**
     * The capabilities as this revision reads them: list-changed and resource-update notifications come on a
     * subscriptions/listen stream, which this server does not offer (what it lists never changes while it runs).
     */
    private Map<String, Object> withoutSubscriptions(McpSchema.ServerCapabilities capabilities) {
        Map<String, Object> all =
                new LinkedHashMap<>(mapper.convertValue(capabilities, new TypeRef<Map<String, Object>>() {}));
        all.replaceAll((name, value) -> {
            if (value instanceof Map<?, ?> flags) {
                Map<Object, Object> kept = new LinkedHashMap<>(flags);
                kept.remove("listChanged");
                kept.remove("subscribe");
                return kept;
            }
            return value;
        });
        return all;
    }

    private synchronized McpSchema.InitializeResult serverInfo(McpSchema.JSONRPCRequest call) {
        if (server == null) {
            session(call);
        }
        return server;
    }

    /** A result as the revision sends it: with its type, the server's identity, and cache hints where it may be cached. */
    Map<String, Object> dressed(String method, Object result) {
        Map<String, Object> dressed =
                new LinkedHashMap<>(mapper.convertValue(result, new TypeRef<Map<String, Object>>() {}));
        dressed.putIfAbsent("resultType", "complete");
        Map<Object, Object> meta =
                dressed.get("_meta") instanceof Map<?, ?> m ? new LinkedHashMap<>(m) : new LinkedHashMap<>();
        if (server != null) {
            meta.put(META_SERVER, server.serverInfo());
        }
        dressed.put("_meta", meta);
        if (McpSchema.METHOD_TOOLS_LIST.equals(method) && dressed.get("tools") instanceof List<?> tools) {
            dressed.put("tools", tools.stream().map(this::withTaskSupport).toList());
        }
        if (CACHEABLE.contains(method) && "complete".equals(dressed.get("resultType"))) {
            // what this server lists does not change while it runs, but a client of another user must not share it
            dressed.putIfAbsent("ttlMs", 0);
            dressed.putIfAbsent("cacheScope", "private");
        }
        return dressed;
    }

    /** A tool as tools/list shows it to this revision: with {@code execution.taskSupport} where its calls may run as tasks. */
    private Object withTaskSupport(Object tool) {
        if (tool instanceof Map<?, ?> shown
                && shown.get("name") instanceof String name
                && tools.taskSupport(name) instanceof TaskSupport support
                && support != TaskSupport.FORBIDDEN) {
            Map<Object, Object> with = new LinkedHashMap<>(shown);
            with.put("execution", Map.of("taskSupport", support.wireName()));
            return with;
        }
        return tool;
    }

    /**
     * A message the SDK sends while serving {@code call}, as this revision sends it: a result dressed; an
     * unknown resource as invalid params naming its URI (the earlier revisions' -32002 is gone); a log
     * message only if the request asked for that level (its _meta logLevel); a request to the client
     * refused, since this revision has none during a call. Null: not sent.
     */
    McpSchema.JSONRPCMessage outgoing(McpSchema.JSONRPCRequest call, McpSchema.JSONRPCMessage message) {
        return switch (message) {
            case McpSchema.JSONRPCResponse r
            when r.result() instanceof McpSchema.ListToolsResult listed && !samples(call) ->
                new McpSchema.JSONRPCResponse(
                        r.jsonrpc(),
                        r.id(),
                        dressed(call.method(), ToolCatalog.without(listed, tools.needSampling())),
                        null);
            case McpSchema.JSONRPCResponse r
            when r.result() != null ->
                new McpSchema.JSONRPCResponse(r.jsonrpc(), r.id(), dressed(call.method(), r.result()), null);
            case McpSchema.JSONRPCResponse r
            when r.error() != null && r.error().code() == McpSchema.ErrorCodes.RESOURCE_NOT_FOUND ->
                McpSchema.JSONRPCResponse.error(
                        r.id(),
                        new McpSchema.JSONRPCResponse.JSONRPCError(
                                McpSchema.ErrorCodes.INVALID_PARAMS,
                                r.error().message(),
                                Map.of("uri", String.valueOf(((Map<?, ?>) call.params()).get("uri")))));
            case McpSchema.JSONRPCNotification n
            when McpSchema.METHOD_NOTIFICATION_MESSAGE.equals(n.method()) -> logged(call, n) ? n : null;
            case McpSchema.JSONRPCRequest r ->
                throw new IllegalStateException("cannot send " + r.method()
                        + " to the client during a call of protocol " + VERSION + ", which has no server requests");
            default -> message;
        };
    }

    /** The HTTP status of an answer: 404 for an unknown method, 400 for a capability the client did not declare. */
    static int status(McpSchema.JSONRPCResponse answer) {
        if (answer.error() == null) {
            return 200;
        }
        return switch (answer.error().code()) {
            case McpSchema.ErrorCodes.METHOD_NOT_FOUND -> 404;
            case MISSING_CLIENT_CAPABILITY -> 400;
            default -> 200;
        };
    }

    private boolean logged(McpSchema.JSONRPCRequest call, McpSchema.JSONRPCNotification notification) {
        if (!(meta(call).get(META_LOG_LEVEL) instanceof String asked)) {
            return false;
        }
        Map<String, Object> params = mapper.convertValue(notification.params(), new TypeRef<Map<String, Object>>() {});
        try {
            McpSchema.LoggingLevel wanted = McpSchema.LoggingLevel.valueOf(asked.toUpperCase(Locale.ROOT));
            McpSchema.LoggingLevel level = McpSchema.LoggingLevel.valueOf(
                    String.valueOf(params.get("level")).toUpperCase(Locale.ROOT));
            return level.level() >= wanted.level();
        } catch (IllegalArgumentException e) {
            return true;
        }
    }

    /** The value a request's Mcp-Name header must repeat: a tool's or prompt's name, a resource's URI; null if none. */
    private static String named(McpSchema.JSONRPCRequest call) {
        if (!(call.params() instanceof Map<?, ?> params)) {
            return null;
        }
        Object value = switch (call.method()) {
            case McpSchema.METHOD_TOOLS_CALL, McpSchema.METHOD_PROMPT_GET -> params.get("name");
            case McpSchema.METHOD_RESOURCES_READ -> params.get("uri");
            case Tasks.GET, Tasks.UPDATE, Tasks.CANCEL -> params.get("taskId");
            default -> null;
        };
        return value instanceof String s ? s : null;
    }

    private static String stripped(String header) {
        return header == null ? null : header.strip();
    }
}

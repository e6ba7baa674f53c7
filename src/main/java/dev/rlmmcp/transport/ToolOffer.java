package dev.rlmmcp.transport;

import dev.rlmmcp.tools.ToolCatalog;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which tools each client is offered: every tool, but those that work only for a client that samples (rlm_solve
 * with no model API: {@link dev.rlmmcp.tools.RlmTool#needsSampling}) only to a client whose initialize declared
 * sampling, since a tool that can only fail costs every turn of the client's model its schema. The initialize a
 * connection sent decides, and the tools/list answers going out on that connection follow. A connection whose
 * initialize was not seen here (an MCP session adopted from another node) is offered every tool. The 2026-07-28
 * revision, whose requests each name the client's capabilities, does the same per request ({@code
 * stateless.StatelessTools#needSampling}).
 */
public final class ToolOffer {

    private final Set<String> needSampling;
    private final Map<String, Boolean> samples = new ConcurrentHashMap<>();

    public ToolOffer(Set<String> needSampling) {
        this.needSampling = Set.copyOf(needSampling);
    }

    /** Every tool to every client. */
    public static ToolOffer all() {
        return new ToolOffer(Set.of());
    }

    /** Notes what {@code connection}'s client declared, when {@code message} is its initialize. */
    public void seen(String connection, McpSchema.JSONRPCMessage message) {
        if (message instanceof McpSchema.JSONRPCRequest request
                && McpSchema.METHOD_INITIALIZE.equals(request.method())) {
            samples.put(connection, declaresSampling(request.params()));
        }
    }

    /** Notes what {@code connection}'s client declared in its initialize. */
    public void initialized(String connection, McpSchema.InitializeRequest request) {
        samples.put(
                connection,
                request.capabilities() != null && request.capabilities().sampling() != null);
    }

    /** Whether {@code connection}'s client declared sampling; true where its initialize was not seen. */
    public boolean samples(String connection) {
        return samples.getOrDefault(connection, true);
    }

    /** {@code message} as it goes out on {@code connection}: a tools/list answer lists only what the client can use. */
    public McpSchema.JSONRPCMessage outgoing(String connection, McpSchema.JSONRPCMessage message) {
        if (needSampling.isEmpty()
                || !(message instanceof McpSchema.JSONRPCResponse answer)
                || !(answer.result() instanceof McpSchema.ListToolsResult listed)
                || samples(connection)) {
            return message;
        }
        return new McpSchema.JSONRPCResponse(answer.jsonrpc(), answer.id(), forClient(listed, false), answer.error());
    }

    /** The tools of {@code all} a client is offered. */
    public McpSchema.ListToolsResult forClient(McpSchema.ListToolsResult all, boolean clientSamples) {
        return clientSamples ? all : ToolCatalog.without(all, needSampling);
    }

    /** Forgets an ended connection. */
    public void ended(String connection) {
        samples.remove(connection);
    }

    /** Whether an initialize's params (as parsed: maps) declare the sampling capability. */
    public static boolean declaresSampling(Object params) {
        if (params instanceof McpSchema.InitializeRequest request) {
            return request.capabilities() != null && request.capabilities().sampling() != null;
        }
        return params instanceof Map<?, ?> p
                && p.get("capabilities") instanceof Map<?, ?> capabilities
                && capabilities.get("sampling") != null;
    }
}

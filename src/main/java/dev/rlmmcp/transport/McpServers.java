package dev.rlmmcp.transport;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.tools.RlmPrompt;
import dev.rlmmcp.tools.ToolCatalog;
import dev.rlmmcp.transport.stateless.StatelessTools;
import dev.rlmmcp.transport.stateless.TaskSupport;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpServerTransportProvider;
import io.modelcontextprotocol.spec.McpStreamableServerTransportProvider;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** One MCP server per transport, all built from the same tools and prompt (the SDK needs one per transport). */
public final class McpServers {

    public static final String NAME = "rlm-mcp";

    /** How long a request to the client (sampling for llm_query) may wait; llm_query's own timeout is shorter. */
    private static final java.time.Duration SERVER_REQUEST_TIMEOUT = java.time.Duration.ofHours(1);

    /** Short: some clients (Codex) append it to every tool's description. */
    private static final String INSTRUCTIONS = """
            Load large data into persistent Python REPL variables (rlm_load_file, rlm_load_data), explore it with \
            rlm_execute, print only small results.""";

    private final ToolCatalog catalog;
    private final McpJsonMapper mapper;
    private final Features extra;

    /**
     * MCP features a program embedding rlm-mcp serves next to its own tools and prompt (e.g. the fixtures a
     * test suite calls): more tools and prompts, resources, resource templates, completions, and whether the
     * server announces logging, and which of the tools may run as tasks (a tool not named: never). Each
     * capability is announced only when something of it is there.
     */
    public record Features(
            List<McpServerFeatures.SyncToolSpecification> tools,
            List<McpServerFeatures.SyncPromptSpecification> prompts,
            List<McpServerFeatures.SyncResourceSpecification> resources,
            List<McpServerFeatures.SyncResourceTemplateSpecification> resourceTemplates,
            List<McpServerFeatures.SyncCompletionSpecification> completions,
            boolean logging,
            Map<String, TaskSupport> taskSupport) {

        /** Nothing beyond rlm-mcp's own tools and prompt. */
        public static final Features NONE =
                new Features(List.of(), List.of(), List.of(), List.of(), List.of(), false, Map.of());

        public Features {
            tools = List.copyOf(tools);
            prompts = List.copyOf(prompts);
            resources = List.copyOf(resources);
            resourceTemplates = List.copyOf(resourceTemplates);
            completions = List.copyOf(completions);
            taskSupport = Map.copyOf(taskSupport);
        }
    }

    public McpServers(ToolCatalog catalog, ObjectMapper json) {
        this(catalog, json, Features.NONE);
    }

    /** With {@code extra} served next to the catalog's tools and the rlm prompt. */
    public McpServers(ToolCatalog catalog, ObjectMapper json, Features extra) {
        this.catalog = catalog;
        this.mapper = new ProtocolMapper(new JacksonMcpJsonMapper(json));
        this.extra = extra;
    }

    public ToolCatalog catalog() {
        return catalog;
    }

    /**
     * What protocol 2026-07-28 needs to know of the tools: the catalog's that may run long (REPL steps, loads,
     * run_python) may run as tasks when they do, the extra features' as they say; and their Mcp-Param headers.
     */
    public StatelessTools statelessTools() {
        Map<String, TaskSupport> support = new HashMap<>();
        catalog.mayRunLong().forEach(name -> support.put(name, TaskSupport.OPTIONAL));
        support.putAll(extra.taskSupport());
        return StatelessTools.of(toolList().tools(), support, catalog.needSampling());
    }

    public McpJsonMapper mapper() {
        return mapper;
    }

    /**
     * What the SDK answers to an initialize that settled on {@code version}, made without an SDK server: a
     * stdio start gives it while its server is still being built (see {@code stdio.StartupAnswers#offer}).
     * The SDK announces logging whatever the capabilities say.
     */
    public McpSchema.InitializeResult initializeResult(String version) {
        return new McpSchema.InitializeResult(
                version,
                capabilities().mutate().logging().build(),
                new McpSchema.Implementation(NAME, Version.current()),
                INSTRUCTIONS);
    }

    /** Every tool, in the order they are served: what tools/list answers a client that samples. */
    public McpSchema.ListToolsResult toolList() {
        List<McpSchema.Tool> tools = new ArrayList<>(catalog.definitions());
        extra.tools().forEach(spec -> tools.add(spec.tool()));
        return new McpSchema.ListToolsResult(tools, null);
    }

    /** Which tools each client of a transport is listed: those that need sampling only to a client that samples. */
    public ToolOffer toolOffer() {
        return new ToolOffer(catalog.needSampling());
    }

    /** What prompts/list answers, where the order is known: the SDK lists prompts in no set order. */
    public Optional<McpSchema.ListPromptsResult> promptList() {
        return extra.prompts().isEmpty()
                ? Optional.of(new McpSchema.ListPromptsResult(
                        List.of(RlmPrompt.specification().prompt()), null))
                : Optional.empty();
    }

    public McpSyncServer serve(McpServerTransportProvider transport) {
        return serve(transport, ToolForward.NONE);
    }

    public McpSyncServer serve(McpStreamableServerTransportProvider transport) {
        return serve(transport, ToolForward.NONE);
    }

    /** A server whose tool calls {@code forward} may send to another node (in a cluster). */
    public McpSyncServer serve(McpServerTransportProvider transport, ToolForward forward) {
        return configure(McpServer.sync(transport), forward);
    }

    /** A server whose tool calls {@code forward} may send to another node (in a cluster). */
    public McpSyncServer serve(McpStreamableServerTransportProvider transport, ToolForward forward) {
        return configure(McpServer.sync(transport), forward);
    }

    private McpSyncServer configure(McpServer.SyncSpecification<?> spec, ToolForward forward) {
        spec.serverInfo(NAME, Version.current())
                .instructions(INSTRUCTIONS)
                .capabilities(capabilities())
                .jsonMapper(mapper)
                .validateToolInputs(false)
                .jsonSchemaValidator(new OwnOutputValidator())
                .immediateExecution(true)
                .requestTimeout(SERVER_REQUEST_TIMEOUT);
        List<McpServerFeatures.SyncToolSpecification> tools = new ArrayList<>(catalog.specifications());
        List<McpServerFeatures.SyncPromptSpecification> prompts = new ArrayList<>(List.of(RlmPrompt.specification()));
        tools.addAll(extra.tools());
        if (forward != ToolForward.NONE) {
            tools.replaceAll(tool -> forwarding(tool, forward));
        }
        prompts.addAll(extra.prompts());
        spec.resources(extra.resources())
                .resourceTemplates(extra.resourceTemplates())
                .completions(extra.completions());
        return spec.tools(tools).prompts(prompts).build();
    }

    private static McpServerFeatures.SyncToolSpecification forwarding(
            McpServerFeatures.SyncToolSpecification tool, ToolForward forward) {
        return new McpServerFeatures.SyncToolSpecification(
                tool.tool(),
                (exchange, request) -> forward.forwarded(exchange, request)
                        .orElseGet(() -> tool.callHandler().apply(exchange, request)));
    }

    private McpSchema.ServerCapabilities capabilities() {
        McpSchema.ServerCapabilities.Builder capabilities =
                McpSchema.ServerCapabilities.builder().tools(false).prompts(false);
        if (!extra.resources().isEmpty() || !extra.resourceTemplates().isEmpty()) {
            capabilities.resources(true, false);
        }
        if (extra.logging()) {
            capabilities.logging();
        }
        if (!extra.completions().isEmpty()) {
            capabilities.completions();
        }
        return capabilities.build();
    }
}

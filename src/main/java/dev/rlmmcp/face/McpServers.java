package dev.rlmmcp.face;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.tools.RlmPrompt;
import dev.rlmmcp.tools.ToolCatalog;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import dev.rlmmcp.tools.fixtures.ConformanceFixtures;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpServerTransportProvider;
import io.modelcontextprotocol.spec.McpStreamableServerTransportProvider;
import java.util.ArrayList;
import java.util.List;

/** One MCP server per transport, all built from the same tools and prompt (the SDK needs one per transport). */
public final class McpServers {

    public static final String NAME = "rlm-mcp";

    /** How long a request to the client (sampling for llm_query) may wait; llm_query's own timeout is shorter. */
    private static final java.time.Duration SERVER_REQUEST_TIMEOUT = java.time.Duration.ofHours(1);

    private static final String INSTRUCTIONS = """
            rlm-mcp keeps large data out of your context: load it into variables of a persistent Python REPL \
            (rlm_load_file, rlm_load_data), explore it with rlm_execute, and print only small results. The prompt \
            rlm describes the workflow.""";

    private final ToolCatalog catalog;
    private final McpJsonMapper mapper;
    private final ConformanceFixtures fixtures;

    public McpServers(ToolCatalog catalog, ObjectMapper json) {
        this(catalog, json, null);
    }

    /** With {@code fixtures} (may be null) served next to the real tools, as the conformance suite needs. */
    public McpServers(ToolCatalog catalog, ObjectMapper json, ConformanceFixtures fixtures) {
        this.catalog = catalog;
        this.mapper = new ProtocolMapper(new JacksonMcpJsonMapper(json));
        this.fixtures = fixtures;
    }

    public ToolCatalog catalog() {
        return catalog;
    }

    public McpJsonMapper mapper() {
        return mapper;
    }

    public McpSyncServer serve(McpServerTransportProvider transport) {
        return configure(McpServer.sync(transport));
    }

    public McpSyncServer serve(McpStreamableServerTransportProvider transport) {
        return configure(McpServer.sync(transport));
    }

    private McpSyncServer configure(McpServer.SyncSpecification<?> spec) {
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
        if (fixtures != null) {
            tools.addAll(fixtures.tools());
            prompts.addAll(fixtures.prompts());
            spec.resources(fixtures.resources())
                    .resourceTemplates(fixtures.resourceTemplates())
                    .completions(fixtures.completions());
        }
        return spec.tools(tools).prompts(prompts).build();
    }

    private McpSchema.ServerCapabilities capabilities() {
        McpSchema.ServerCapabilities.Builder capabilities = McpSchema.ServerCapabilities.builder()
                .tools(false).prompts(false);
        if (fixtures != null) {
            capabilities.resources(true, false).logging().completions();
        }
        return capabilities.build();
    }
}

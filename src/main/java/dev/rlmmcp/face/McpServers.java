package dev.rlmmcp.face;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.tools.RlmPrompt;
import dev.rlmmcp.tools.ToolCatalog;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpServerTransportProvider;
import io.modelcontextprotocol.spec.McpStreamableServerTransportProvider;

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

    public McpServers(ToolCatalog catalog, ObjectMapper json) {
        this.catalog = catalog;
        this.mapper = new JacksonMcpJsonMapper(json);
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
        return spec.serverInfo(NAME, Version.current())
                .instructions(INSTRUCTIONS)
                .capabilities(capabilities())
                .jsonMapper(mapper)
                .validateToolInputs(false)
                .jsonSchemaValidator(new OwnOutputValidator())
                .immediateExecution(true)
                .requestTimeout(SERVER_REQUEST_TIMEOUT)
                .tools(catalog.specifications())
                .prompts(RlmPrompt.specification())
                .build();
    }

    private static McpSchema.ServerCapabilities capabilities() {
        return McpSchema.ServerCapabilities.builder().tools(false).prompts(false).build();
    }
}

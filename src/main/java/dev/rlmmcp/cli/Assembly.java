package dev.rlmmcp.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.core.KernelFactory;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.Settings;
import dev.rlmmcp.core.data.DataRoot;
import dev.rlmmcp.core.llm.LlmService;
import dev.rlmmcp.core.kernel.KernelLauncher;
import dev.rlmmcp.face.McpServers;
import dev.rlmmcp.tools.ToolCatalog;
import dev.rlmmcp.tools.fixtures.ConformanceFixtures;

/** The layers wired together: core, then tools over it, then the MCP server factory the faces use. */
record Assembly(ObjectMapper json, Sessions sessions, ToolCatalog catalog, McpServers servers) implements AutoCloseable {

    static Assembly of(Settings settings, KernelLauncher launcher) {
        ObjectMapper json = mapper();
        return of(settings, launcher, json, LlmService.samplingOnly(json), false);
    }

    /** With {@code conformanceFixtures}, the conformance suite's fixture tools, resources and prompts are served too. */
    static Assembly of(Settings settings, KernelLauncher launcher, ObjectMapper json, LlmService llm,
            boolean conformanceFixtures) {
        Sessions sessions = new Sessions(new KernelFactory(settings, launcher, json), llm);
        ToolCatalog catalog = ToolCatalog.standard(sessions, new DataRoot(settings.dataRoot()));
        ConformanceFixtures fixtures = conformanceFixtures ? new ConformanceFixtures(json) : null;
        return new Assembly(json, sessions, catalog, new McpServers(catalog, json, fixtures));
    }

    /** JSON for everything, without Jackson's 20 MB cap on one string: inline data can be far larger. */
    static ObjectMapper mapper() {
        JsonFactory factory = JsonFactory.builder()
                .streamReadConstraints(StreamReadConstraints.builder().maxStringLength(Integer.MAX_VALUE).build())
                .build();
        return new ObjectMapper(factory);
    }

    @Override
    public void close() {
        sessions.close();
    }
}

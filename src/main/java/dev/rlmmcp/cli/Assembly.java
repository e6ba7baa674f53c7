package dev.rlmmcp.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.core.KernelFactory;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.Settings;
import dev.rlmmcp.core.data.DataRoot;
import dev.rlmmcp.core.kernel.KernelLauncher;
import dev.rlmmcp.core.store.StateStore;
import java.util.concurrent.CompletableFuture;
import dev.rlmmcp.face.McpServers;
import dev.rlmmcp.tools.ToolCatalog;

/** The layers wired together: core, then tools over it, then the MCP server factory the faces use. */
record Assembly(ObjectMapper json, Sessions sessions, ToolCatalog catalog, McpServers servers) implements AutoCloseable {

    /** Nothing kept on disk. */
    static Assembly of(Settings settings, KernelLauncher launcher) {
        return of(settings, launcher, CompletableFuture.completedFuture(null));
    }

    /** Sessions kept in the store being opened, or in memory only if it completes with null. */
    static Assembly of(Settings settings, KernelLauncher launcher, CompletableFuture<StateStore> store) {
        ObjectMapper json = mapper();
        Sessions sessions = new Sessions(new KernelFactory(settings, launcher, json), store);
        ToolCatalog catalog = ToolCatalog.standard(sessions, new DataRoot(settings.dataRoot()));
        return new Assembly(json, sessions, catalog, new McpServers(catalog, json));
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

package dev.rlmmcp.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.bridge.BridgedServers;
import dev.rlmmcp.bridge.ServerConfigs;
import dev.rlmmcp.bridge.ServerDefinition;
import dev.rlmmcp.bridge.sdk.SdkBridgedServers;
import dev.rlmmcp.core.Limits;
import dev.rlmmcp.core.Ownership;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.data.DataRoot;
import dev.rlmmcp.data.DataSources;
import dev.rlmmcp.kernel.HostPolicy;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.llm.LlmService;
import dev.rlmmcp.rlm.RlmConfig;
import dev.rlmmcp.rlm.RlmRuns;
import dev.rlmmcp.store.StateStore;
import dev.rlmmcp.tools.ToolCatalog;
import dev.rlmmcp.tools.standard.StandardTools;
import dev.rlmmcp.transport.McpServers;
import dev.rlmmcp.transport.Version;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The layers wired together: core, then tools over it, then the MCP server factory the transports use. */
record Assembly(
        ObjectMapper json,
        Sessions sessions,
        RlmRuns runs,
        Parts parts,
        BridgedServers bridge,
        ToolCatalog catalog,
        McpServers servers,
        PythonCheck python)
        implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Assembly.class);

    /**
     * The parts a command chose beyond the kernel settings; {@code extra}: MCP features served next to
     * rlm-mcp's own (those of a program that embeds it, see {@link Main#run}); {@code rlm}: the limits,
     * prices and context windows of RLM runs; {@code begin}: completes when the start's background work
     * (the Python check, then warm kernels) may begin: at once, or for stdio once the client has its tools.
     */
    record Parts(
            LlmService llm,
            Bridge bridge,
            DataSources sources,
            CompletableFuture<StateStore> store,
            Limits defaultLimits,
            McpServers.Features extra,
            RlmConfig rlm,
            CompletableFuture<?> begin) {

        /** Background work beginning at once. */
        Parts(
                LlmService llm,
                Bridge bridge,
                DataSources sources,
                CompletableFuture<StateStore> store,
                Limits defaultLimits,
                McpServers.Features extra,
                RlmConfig rlm) {
            this(llm, bridge, sources, store, defaultLimits, extra, rlm, CompletableFuture.completedFuture(null));
        }

        /** Nothing configured, and nothing kept on disk. */
        static Parts none(ObjectMapper json) {
            return new Parts(
                    LlmService.samplingOnly(json),
                    Bridge.NONE,
                    DataSources.defaults(),
                    CompletableFuture.completedFuture(null),
                    Limits.NONE,
                    McpServers.Features.NONE,
                    RlmConfig.DEFAULTS);
        }
    }

    /** Nothing configured beyond the kernel settings; sessions in the store being opened (null: memory only). */
    static Assembly of(Settings settings, HostPolicy policy, CompletableFuture<StateStore> store) {
        ObjectMapper json = mapper();
        Parts none = Parts.none(json);
        return of(
                settings,
                policy,
                json,
                new Parts(
                        none.llm(),
                        none.bridge(),
                        none.sources(),
                        store,
                        none.defaultLimits(),
                        none.extra(),
                        none.rlm()));
    }

    static Assembly of(Settings settings, HostPolicy policy, ObjectMapper json, Parts parts) {
        return of(settings, policy, json, parts, Ownership.SINGLE_NODE);
    }

    /** As above, the sessions running only what {@code ownership} says this node holds (cluster mode). */
    static Assembly of(Settings settings, HostPolicy policy, ObjectMapper json, Parts parts, Ownership ownership) {
        KernelFactory kernels = new KernelFactory(settings, policy, json);
        PythonCheck python = PythonCheck.start(kernels, parts.begin());
        python.whenPassed(() -> parts.store()
                .thenAccept(store -> kernels.keepWarm(
                        store == null ? null : store.snapshots().root(), store == null ? null : store.directory())));
        Sessions sessions = new Sessions(kernels, parts.llm(), parts.store(), parts.defaultLimits(), ownership);
        BridgedServers bridged = parts.bridge().servers(settings, json);
        RlmRuns runs = new RlmRuns(sessions, parts.rlm());
        ToolCatalog catalog =
                StandardTools.catalog(sessions, new DataRoot(settings.dataRoot()), bridged, parts.sources(), runs);
        return new Assembly(
                json, sessions, runs, parts, bridged, catalog, new McpServers(catalog, json, parts.extra()), python);
    }

    /** Where bridged MCP servers are defined, and how long an unused one is kept running. */
    record Bridge(ServerConfigs.Locations locations, Duration idleTimeout) {

        static final Bridge NONE = new Bridge(
                new ServerConfigs.Locations(Path.of("."), Path.of("."), List.of(), false), Duration.ofMinutes(5));

        BridgedServers servers(Settings settings, ObjectMapper json) {
            List<ServerDefinition> found = ServerConfigs.discover(locations, json);
            if (!found.isEmpty()) {
                log.info(
                        "MCP servers for run_python: {}",
                        found.stream()
                                .map(d -> d.name() + " (" + d.source() + ")")
                                .collect(Collectors.joining(", ")));
            }
            return new SdkBridgedServers(
                    found, json, settings.kernelStartTimeout(), settings.maxTimeout(), idleTimeout, Version.current());
        }
    }

    /** JSON for everything, without Jackson's 20 MB cap on one string: inline data can be far larger. */
    static ObjectMapper mapper() {
        JsonFactory factory = JsonFactory.builder()
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxStringLength(Integer.MAX_VALUE)
                        .build())
                .build();
        return new ObjectMapper(factory);
    }

    @Override
    public void close() {
        close(Sessions.SHUTDOWN_TIMEOUT);
    }

    /**
     * Stops everything: first every session's changes are snapshotted (for up to {@code timeout}),
     * then the kernels stop. Only the first call does anything.
     */
    void close(Duration timeout) {
        if (!sessions.close(timeout)) {
            return;
        }
        try {
            bridge.close();
        } finally {
            parts.sources().close();
        }
    }
}

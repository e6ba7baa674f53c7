package dev.rlmmcp.cluster;

import dev.rlmmcp.store.pg.Leases;
import java.util.Optional;

/** The homes of 2025 MCP sessions, kept in the cluster database ({@link Leases}). */
public final class LeaseMcpHomes implements McpSessionHomes {

    private final Leases leases;

    public LeaseMcpHomes(Leases leases) {
        this.leases = leases;
    }

    @Override
    public void record(String mcpSessionId, String initializeJson) {
        leases.recordMcpSession(mcpSessionId, initializeJson);
    }

    @Override
    public Optional<String> initialize(String mcpSessionId) {
        return ClusterOwnership.database(() -> leases.mcpSession(mcpSessionId)).map(Leases.McpHome::initialize);
    }

    @Override
    public void forget(String mcpSessionId) {
        leases.forgetMcpSession(mcpSessionId);
    }
}

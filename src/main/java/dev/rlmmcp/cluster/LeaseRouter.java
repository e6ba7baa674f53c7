package dev.rlmmcp.cluster;

import dev.rlmmcp.store.pg.Leases;
import java.util.Optional;

/**
 * The {@link Router} over the cluster database: a session is served here if this node holds it or
 * takes it over now (its owner's lease expired, or it has none), else by its live owner; a session the
 * cluster does not know is served here (created here, or refused as not found).
 */
public final class LeaseRouter implements Router {

    private static final Local LOCAL = new Local();

    private final Leases leases;
    private final NodeLease lease;
    private final Admissions admissions;

    public LeaseRouter(Leases leases, NodeLease lease) {
        this(leases, lease, new Admissions());
    }

    LeaseRouter(Leases leases, NodeLease lease, Admissions admissions) {
        this.leases = leases;
        this.lease = lease;
        this.admissions = admissions;
    }

    @Override
    public Route route(String sessionId) {
        if (leases.held(sessionId).isPresent()) {
            return LOCAL;
        }
        Optional<Leases.Owner> owner = ClusterOwnership.database(() -> leases.owner(sessionId));
        if (owner.isEmpty() || mine(owner.get())) {
            return LOCAL;
        }
        if (!owner.get().live() && lease.serving()) {
            if (ClusterOwnership.database(() -> leases.acquire(sessionId)).isPresent()) {
                return LOCAL;
            }
            owner = ClusterOwnership.database(() -> leases.owner(sessionId));
        }
        return owner.filter(o -> o.live() && !mine(o))
                .<Route>map(o -> new Remote(o.nodeId(), o.address()))
                .orElse(LOCAL);
    }

    @Override
    public Route peek(String sessionId) {
        if (leases.held(sessionId).isPresent()) {
            return LOCAL;
        }
        return ClusterOwnership.database(() -> leases.owner(sessionId))
                .filter(o -> o.live() && !mine(o))
                .<Route>map(o -> new Remote(o.nodeId(), o.address()))
                .orElse(LOCAL);
    }

    @Override
    public Route routeMcpSession(String mcpSessionId) {
        return ClusterOwnership.database(() -> leases.mcpSession(mcpSessionId))
                .map(Leases.McpHome::home)
                .filter(home -> home.live() && !mine(home))
                .<Route>map(home -> new Remote(home.nodeId(), home.address()))
                .orElse(LOCAL);
    }

    private boolean mine(Leases.Owner owner) {
        return leases.nodeId().equals(owner.nodeId());
    }

    @Override
    public String nodeId() {
        return leases.nodeId();
    }

    @Override
    public boolean serving() {
        return lease.serving();
    }

    @Override
    public Admission admit(String sessionId) {
        return lease.live() ? admissions.admit(sessionId) : null;
    }
}

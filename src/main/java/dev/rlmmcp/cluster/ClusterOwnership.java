package dev.rlmmcp.cluster;

import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.Ownership;
import dev.rlmmcp.store.StoreException;
import dev.rlmmcp.store.pg.Leases;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Sessions' ownership held in the cluster database ({@link Leases}): a node runs a session while it
 * holds it at the epoch the database has and its own lease is live ({@link NodeLease}); it takes a
 * session over only when the owner's lease has expired, and takes no new one while handing over.
 */
public final class ClusterOwnership implements Ownership {

    private final Leases leases;
    private final NodeLease lease;
    private final Admissions admissions;

    public ClusterOwnership(Leases leases, NodeLease lease) {
        this(leases, lease, new Admissions());
    }

    ClusterOwnership(Leases leases, NodeLease lease, Admissions admissions) {
        this.leases = leases;
        this.lease = lease;
        this.admissions = admissions;
    }

    @Override
    public Optional<String> nodeId() {
        return Optional.of(leases.nodeId());
    }

    @Override
    public void claim(String sessionId) {
        if (!lease.serving()) {
            throw new StoreException("this node is " + (lease.live() ? "handing its sessions over" : "fenced"), null);
        }
        leases.claim(sessionId);
    }

    @Override
    public boolean claimOffered(String sessionId) {
        return lease.serving() && leases.claimNew(sessionId);
    }

    @Override
    public boolean acquire(String sessionId) {
        if (!lease.live()) {
            throw new RlmException(
                    ErrorCode.SESSION_MOVED,
                    "this node cannot renew its lease in the cluster database now, so it runs no session; nothing "
                            + "of this call ran",
                    null,
                    "retry: the request is routed to a node that can (or here, once the database answers)");
        }
        return lease.serving() && database(() -> leases.acquire(sessionId)).isPresent();
    }

    @Override
    public boolean holds(String sessionId) {
        return lease.live() && leases.held(sessionId).isPresent();
    }

    @Override
    public boolean quiesce(String sessionId, Duration timeout) {
        return admissions.awaitQuiet(sessionId, timeout);
    }

    @Override
    public void release(String sessionId) {
        leases.release(sessionId);
    }

    @Override
    public Optional<String> liveOwnerElsewhere(String sessionId) {
        return database(() -> leases.owner(sessionId))
                .filter(o -> o.live() && o.nodeId() != null && !o.nodeId().equals(leases.nodeId()))
                .map(Leases.Owner::nodeId);
    }

    @Override
    public List<Elsewhere> elsewhere() {
        return database(leases::sessions).stream()
                .map(s -> new Elsewhere(
                        s.id(),
                        s.owner() == null ? null : s.owner().nodeId(),
                        s.owner() != null && s.owner().live(),
                        s.record()))
                .toList();
    }

    /** A read of the cluster database; one that fails is the caller's to retry. */
    static <T> T database(Supplier<T> read) {
        try {
            return read.get();
        } catch (StoreException e) {
            throw new RlmException(
                    ErrorCode.UPSTREAM_ERROR,
                    "the cluster database did not answer: " + e.getMessage(),
                    null,
                    "retry; if it persists, check the cluster database (--cluster-db) and this node's log");
        }
    }
}

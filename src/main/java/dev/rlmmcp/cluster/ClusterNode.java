package dev.rlmmcp.cluster;

import dev.rlmmcp.core.Ownership;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.store.ClusterSessionDatabase;
import dev.rlmmcp.store.pg.Leases;
import dev.rlmmcp.store.pg.PgCluster;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This process as a node of the cluster: a node id new at each start, its connection to the cluster
 * database, its lease ({@link NodeLease}), and what the layers above use: the session database and
 * {@link Ownership} for core, the {@link Router}, {@link McpSessionHomes} and {@link PeerAuth} for the
 * transport. {@link #start} binds it to the sessions; {@link #handOver} is its orderly exit.
 */
public final class ClusterNode implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ClusterNode.class);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final ClusterSettings settings;
    private final PgCluster pg;
    private final NodeLease lease;
    private final AtomicReference<Sessions> sessions = new AtomicReference<>();
    private final Admissions admissions = new Admissions();

    private ClusterNode(ClusterSettings settings, PgCluster pg) {
        this.settings = settings;
        this.pg = pg;
        this.lease = new NodeLease(pg.leases()::renew, this::fence, settings.lease(), System::nanoTime);
    }

    /** Connects to the cluster database (creating or migrating its schema) as a new node. */
    public static ClusterNode open(ClusterSettings settings) {
        byte[] bytes = new byte[6];
        RANDOM.nextBytes(bytes);
        String nodeId = "n-" + HexFormat.of().formatHex(bytes);
        return new ClusterNode(settings, PgCluster.open(settings.databaseUrl(), nodeId, settings.nodeAddress()));
    }

    public String nodeId() {
        return pg.leases().nodeId();
    }

    public ClusterSettings settings() {
        return settings;
    }

    /** The cluster's session database (records, traces, snapshot pointers), fenced by this node's epochs. */
    public ClusterSessionDatabase database() {
        return pg.sessions();
    }

    public Leases leases() {
        return pg.leases();
    }

    public Ownership ownership() {
        return new ClusterOwnership(pg.leases(), lease, admissions);
    }

    public Router router() {
        return new LeaseRouter(pg.leases(), lease, admissions);
    }

    public McpSessionHomes homes() {
        return new LeaseMcpHomes(pg.leases());
    }

    public PeerAuth auth() {
        return new PeerAuth(settings.secret(), nodeId());
    }

    public NodeLease lease() {
        return lease;
    }

    /** Joins the cluster: the first renewal of the lease (thrown if it fails), then the heartbeat. */
    public void start(Sessions served) {
        sessions.set(served);
        lease.start();
        log.info(
                "cluster node {} at {}: lease {} ms",
                nodeId(),
                settings.nodeAddress(),
                settings.lease().toMillis());
    }

    /** Self-fence: every epoch forgotten first (later writes are refused), then every kernel stopped. */
    private void fence() {
        pg.leases().dropAll();
        Sessions served = sessions.get();
        if (served != null) {
            served.fence();
        }
    }

    /**
     * SIGTERM: this node takes no new work, calls under way finish, each session is snapshotted and
     * released, then the lease ends so that peers take over whatever is left at once.
     */
    public void handOver(Duration timeout) {
        long started = System.nanoTime();
        lease.drain();
        try {
            pg.leases().draining();
        } catch (RuntimeException e) {
            log.warn("marking this node draining: {}", e.getMessage());
        }
        admissions.close(); // each session is handed over once the requests already let in for it have ended
        Sessions served = sessions.get();
        if (served != null) {
            served.handOver(timeout);
        }
        lease.close(); // no heartbeat may renew the lease once it has ended
        try {
            pg.leases().leave();
        } catch (RuntimeException e) {
            log.warn("ending this node's lease (peers take over when it expires): {}", e.getMessage());
        }
        log.info("cluster node {} left the cluster in {} ms", nodeId(), (System.nanoTime() - started) / 1_000_000);
    }

    @Override
    public void close() {
        lease.close();
        pg.close();
    }
}

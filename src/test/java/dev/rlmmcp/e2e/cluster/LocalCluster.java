package dev.rlmmcp.e2e.cluster;

import dev.rlmmcp.e2e.support.PostgresServer;
import dev.rlmmcp.testsupport.S3ProxyServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

/**
 * A cluster on this machine: the network ({@link ClusterNetwork}), PostgreSQL and S3Proxy on the host's
 * address there, N nodes, and nginx balancers made on demand. {@link #close} stops everything and deletes
 * the namespaces and files, also after a failed test.
 */
public final class LocalCluster implements AutoCloseable {

    /** The shared secret of the test cluster's peer channel (never a real one). */
    private static final String SECRET = "cluster-it-secret-" + HexFormat.of().toHexDigits(System.nanoTime());

    private static final String DB_PASSWORD = "cluster-it-pw";

    private final Path dir;
    private final ClusterNetwork network;
    private final List<AutoCloseable> open = new CopyOnWriteArrayList<>();
    private final List<ClusterNode> nodes = new ArrayList<>();
    private PostgresServer postgres;
    private S3ProxyServer s3;
    private ClusterDb db;

    private LocalCluster(Path dir, ClusterNetwork network) {
        this.dir = dir;
        this.network = network;
    }

    /**
     * Starts {@code count} nodes with a lease of {@code leaseMs} and these extra serve options; with a lease of
     * {@link #DEFAULT_LEASE} the nodes keep the lease's default, with 0 they are plain single-node servers (the
     * embedded default, no cluster options), for comparison.
     */
    public static final long DEFAULT_LEASE = -1;

    public static LocalCluster start(int count, long leaseMs, List<String> extra) throws IOException {
        Path dir = Files.createTempDirectory("rlm-cluster-");
        LocalCluster cluster = new LocalCluster(dir, ClusterNetwork.create(count));
        try {
            cluster.startStores();
            cluster.makeNodes(count, leaseMs, extra);
            for (ClusterNode node : cluster.nodes) {
                node.start();
            }
            return cluster;
        } catch (IOException | RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    private void startStores() throws IOException {
        postgres = PostgresServer.start(network.hostAddress(), DB_PASSWORD);
        open.add(postgres);
        postgres.createDatabase("rlm");
        db = new ClusterDb(postgres.jdbcUrl("rlm"));
        open.add(db);
        s3 = S3ProxyServer.start(dir.resolve("s3"), network.hostAddress());
        open.add(s3);
        s3.bucket("rlm-cluster");
    }

    private void makeNodes(int count, long leaseMs, List<String> extra) throws IOException {
        Map<String, String> env = new HashMap<>(s3.env());
        env.put("RLM_CLUSTER_SECRET", SECRET);
        env.put("RLM_ALLOW_UNSANDBOXED", "true");
        List<String> options = new ArrayList<>(List.of("--shutdown-timeout-s", "20"));
        if (leaseMs != 0) {
            options.addAll(List.of("--cluster-db", postgres.url("rlm"), "--snapshot-s3", "s3://rlm-cluster/sessions"));
        }
        if (leaseMs > 0) {
            options.addAll(List.of("--cluster-lease-ms", String.valueOf(leaseMs)));
        }
        options.addAll(extra);
        for (int i = 0; i < count; i++) {
            String host = network.nodeHost(i);
            int port = network.isolated() ? 8765 : freePort();
            String peer = host + ":" + (network.isolated() ? 8766 : freePort());
            Path state = Files.createDirectories(dir.resolve("node-" + i));
            List<String> own = new ArrayList<>(options);
            if (leaseMs != 0) {
                own.addAll(List.of("--node-address", peer));
            }
            ClusterNode node = new ClusterNode(i, network.inNamespace(i), host, port, peer, own, env, state);
            nodes.add(node);
            open.add(node);
        }
    }

    /** nginx in front of every node, hashing (the shipped configuration) or round robin. */
    public Balancer balancer(boolean hashing) throws IOException {
        return balancer(nodes, hashing);
    }

    /** nginx in front of these nodes. */
    public Balancer balancer(List<ClusterNode> upstream, boolean hashing) throws IOException {
        Path where = Files.createTempDirectory(dir, "nginx-");
        Balancer balancer = Balancer.start(
                where, upstream.stream().map(ClusterNode::publicAddress).toList(), hashing);
        open.add(balancer);
        return balancer;
    }

    public List<ClusterNode> nodes() {
        return List.copyOf(nodes);
    }

    public ClusterNode node(int i) {
        return nodes.get(i);
    }

    /** The cluster's S3Proxy, to stop and start it. */
    public S3ProxyServer s3() {
        return s3;
    }

    /** The cluster's PostgreSQL, to stop and start it. */
    public PostgresServer postgres() {
        return postgres;
    }

    public ClusterNetwork network() {
        return network;
    }

    /** Read access to the cluster's PostgreSQL tables (who owns what, epochs, traces). */
    public ClusterDb db() {
        return db;
    }

    /** The node whose peer address is {@code nodeAddress}, or null. */
    public ClusterNode byNodeAddress(String nodeAddress) {
        return nodes.stream()
                .filter(n -> n.nodeAddress().equals(nodeAddress))
                .findFirst()
                .orElse(null);
    }

    /** The index of the node that owns the session now, per PostgreSQL; -1 if none does. */
    public int owner(String session) {
        String address = db.ownerAddress(session);
        ClusterNode node = address == null ? null : byNodeAddress(address);
        return node == null ? -1 : node.index();
    }

    /** S3Proxy's files (a bucket is a directory, an object a file). */
    public Path s3Dir() {
        return dir.resolve("s3");
    }

    /** Every node's log, for a failed test's message. */
    public String logs() {
        StringBuilder all = new StringBuilder();
        for (ClusterNode node : nodes) {
            all.append("\n===== node ")
                    .append(node.index())
                    .append(" (")
                    .append(node.publicAddress())
                    .append(")\n");
            String log = node.log()
                    .lines()
                    .filter(line -> !line.contains("\"event\":\"http_request\"") || !line.contains("\"status\":200"))
                    .collect(java.util.stream.Collectors.joining("\n"));
            all.append(log, Math.max(0, log.length() - 30_000), log.length());
        }
        return all.toString();
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        for (int i = open.size() - 1; i >= 0; i--) {
            try {
                open.get(i).close();
            } catch (Exception e) {
                System.err.println("cluster teardown: " + e);
            }
        }
        open.clear();
        network.close();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temporary directory: what is left the OS removes
        }
    }
}

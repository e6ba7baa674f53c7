package dev.rlmmcp.e2e.cluster;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * Where the nodes live: a bridge with an address in the root namespace, and per node a network namespace
 * joined to it by a veth pair, with an address of its own; or, where namespaces cannot be made, loopback
 * (every node on 127.0.0.1, told apart by port). Names and the subnet are random per run, so parallel runs
 * do not clash. {@link #close} deletes everything it made, whatever state the test left it in.
 */
public final class ClusterNetwork implements AutoCloseable {

    private static final SecureRandom RANDOM = new SecureRandom();

    private final String id;
    private final String subnet;
    private final int nodes;
    private final boolean isolated;
    private final List<String> made = new ArrayList<>();

    private ClusterNetwork(String id, String subnet, int nodes, boolean isolated) {
        this.id = id;
        this.subnet = subnet;
        this.nodes = nodes;
        this.isolated = isolated;
    }

    /**
     * Namespaces for {@code nodes} nodes, or loopback (said loudly on stderr) where they cannot be made or
     * the system property {@code rlm.cluster.loopback} is true.
     */
    public static ClusterNetwork create(int nodes) {
        String id = HexFormat.of().toHexDigits(RANDOM.nextInt()).substring(2);
        ClusterNetwork network = new ClusterNetwork(id, freeSubnet(), nodes, true);
        try {
            if (Boolean.getBoolean("rlm.cluster.loopback")) {
                throw new IllegalStateException("-Drlm.cluster.loopback=true");
            }
            network.build();
            Runtime.getRuntime().addShutdownHook(new Thread(network::close));
            return network;
        } catch (IllegalStateException e) {
            network.close();
            System.err.println("\n*** CLUSTER TESTS WITHOUT NETWORK NAMESPACES: " + e.getMessage()
                    + "\n*** (needs root or CAP_NET_ADMIN): every node listens on 127.0.0.1 on ports of its own; "
                    + "partitions (link down) cannot be tested.\n");
            return new ClusterNetwork(id, "127.0.0", nodes, false);
        }
    }

    private static String freeSubnet() {
        String used = Shell.run("ip", "-4", "-o", "addr").output();
        for (int i = 0; i < 50; i++) {
            String subnet = "10." + (200 + RANDOM.nextInt(50)) + "." + RANDOM.nextInt(256);
            if (!used.contains(" " + subnet + ".")) {
                return subnet;
            }
        }
        throw new IllegalStateException("no free 10.2xx.x.0/24 subnet");
    }

    private void build() {
        String bridge = bridge();
        Shell.must("ip", "link", "add", bridge, "type", "bridge");
        made.add("link:" + bridge);
        Shell.must("ip", "addr", "add", hostAddress() + "/24", "dev", bridge);
        Shell.must("ip", "link", "set", bridge, "up");
        for (int i = 0; i < nodes; i++) {
            String ns = namespace(i);
            Shell.must("ip", "netns", "add", ns);
            made.add("netns:" + ns);
            String peer = "rp" + id + "n" + i;
            Shell.must("ip", "link", "add", hostSide(i), "type", "veth", "peer", "name", peer);
            made.add("link:" + hostSide(i));
            Shell.must("ip", "link", "set", peer, "netns", ns);
            Shell.must("ip", "-n", ns, "link", "set", peer, "name", "eth0");
            Shell.must("ip", "-n", ns, "addr", "add", nodeHost(i) + "/24", "dev", "eth0");
            Shell.must("ip", "-n", ns, "link", "set", "eth0", "up");
            Shell.must("ip", "-n", ns, "link", "set", "lo", "up");
            Shell.must("ip", "link", "set", hostSide(i), "master", bridge);
            Shell.must("ip", "link", "set", hostSide(i), "up");
        }
    }

    /** True when the nodes have namespaces of their own; false on the loopback fallback. */
    public boolean isolated() {
        return isolated;
    }

    /** This host's address as the nodes reach it (PostgreSQL and S3Proxy listen here). */
    public String hostAddress() {
        return isolated ? subnet + ".1" : "127.0.0.1";
    }

    /** Node i's own IP address. */
    public String nodeHost(int i) {
        return isolated ? subnet + "." + (11 + i) : "127.0.0.1";
    }

    /** The command prefix that runs a process in node i's namespace (empty on loopback). */
    public List<String> inNamespace(int i) {
        return isolated ? List.of("ip", "netns", "exec", namespace(i)) : List.of();
    }

    /** Cuts node i off from everyone (nginx, PostgreSQL, S3, the other nodes): its link goes down. */
    public void linkDown(int i) {
        requireIsolated();
        Shell.must("ip", "link", "set", hostSide(i), "down");
    }

    /** Node i's link comes back. */
    public void linkUp(int i) {
        requireIsolated();
        Shell.must("ip", "link", "set", hostSide(i), "up");
    }

    private void requireIsolated() {
        if (!isolated) {
            throw new IllegalStateException("no namespaces (loopback fallback): links cannot go down");
        }
    }

    private String bridge() {
        return "rb" + id;
    }

    private String hostSide(int i) {
        return "rv" + id + "n" + i;
    }

    private String namespace(int i) {
        return "rlm-" + id + "-n" + i;
    }

    /** Deletes the namespaces, veth pairs and bridge made (each only once; errors are ignored). */
    @Override
    public synchronized void close() {
        for (int i = made.size() - 1; i >= 0; i--) {
            String[] what = made.get(i).split(":", 2);
            if (what[0].equals("netns")) {
                Shell.run("ip", "netns", "delete", what[1]);
            } else {
                Shell.run("ip", "link", "delete", what[1]);
            }
        }
        made.clear();
    }
}

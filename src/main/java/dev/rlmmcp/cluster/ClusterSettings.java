package dev.rlmmcp.cluster;

import java.time.Duration;

/**
 * What makes {@code serve} a cluster node: the cluster database ({@code --cluster-db}), where peers reach
 * this node ({@code --node-address host:port}), the secret the nodes share (never printed), and the lease
 * a node holds its sessions by ({@code --cluster-lease-ms}).
 */
public record ClusterSettings(String databaseUrl, String nodeAddress, String secret, Duration lease) {

    /** The host of the node address (brackets of an IPv6 literal removed). */
    public String peerHost() {
        String host = nodeAddress.substring(0, nodeAddress.lastIndexOf(':'));
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }

    public int peerPort() {
        return Integer.parseInt(nodeAddress.substring(nodeAddress.lastIndexOf(':') + 1));
    }

    /** {@code host:port} with a port 1..65535 and a host; else why not, for the option's error. */
    public static String checkAddress(String address) {
        int colon = address.lastIndexOf(':');
        if (colon <= 0) {
            return "'" + address + "' is not host:port";
        }
        try {
            int port = Integer.parseInt(address.substring(colon + 1));
            return port >= 1 && port <= 65535 ? null : "its port must be 1..65535, not " + port;
        } catch (NumberFormatException e) {
            return "'" + address + "' has no numeric port";
        }
    }

    /** The database URL with its password masked: {@code postgresql://user:***@host/db}. */
    public static String masked(String url) {
        return url.replaceAll("(//[^:/@]+:)[^@/]*@", "$1***@").replaceAll("(?i)(password=)[^&]*", "$1***");
    }

    /** Never the secret, nor the database password. */
    @Override
    public String toString() {
        return "ClusterSettings[databaseUrl=" + masked(databaseUrl) + ", nodeAddress=" + nodeAddress + ", lease="
                + lease.toMillis() + " ms]";
    }
}

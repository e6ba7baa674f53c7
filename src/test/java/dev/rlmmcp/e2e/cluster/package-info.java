/**
 * A real rlm-mcp cluster on this machine, for the cluster tests and {@code bin/bench --only cluster}:
 * {@link dev.rlmmcp.e2e.cluster.LocalCluster} starts three nodes (each {@code rlm-mcp serve} in a network
 * namespace of its own, joined by veth pairs to a bridge), PostgreSQL and S3Proxy on the bridge's address,
 * and nginx with the shipped {@code deploy/nginx/rlm-mcp.conf} in front; it kills, stops, restarts and cuts
 * off nodes. Where namespaces cannot be made (not root, no CAP_NET_ADMIN) the nodes listen on loopback
 * ports instead, and it says so. Clients: {@link dev.rlmmcp.e2e.cluster.StatelessClient} (2026-07-28) and
 * {@link dev.rlmmcp.e2e.cluster.SessionClient} (2025-11-25 Streamable HTTP). May use the test support
 * ({@code e2e.support}, {@code testsupport}) and the JDK; no JUnit, so that a plain main can run it.
 */
package dev.rlmmcp.e2e.cluster;

/**
 * Cluster mode: this process as one node of several that share a PostgreSQL database and an S3
 * snapshot store. {@link dev.rlmmcp.cluster.ClusterNode} is the entry type: it joins the cluster with
 * a lease renewed by a heartbeat ({@link dev.rlmmcp.cluster.NodeLease}, which fences the node when it
 * cannot renew in time), holds sessions' ownership for core ({@link dev.rlmmcp.cluster.ClusterOwnership}),
 * and tells the transport where a request is served ({@link dev.rlmmcp.cluster.Router}), where 2025 MCP
 * sessions live ({@link dev.rlmmcp.cluster.McpSessionHomes}) and how peers authenticate
 * ({@link dev.rlmmcp.cluster.PeerAuth}). {@link dev.rlmmcp.cluster.ClusterSettings} is what the CLI gives it.
 *
 * <p>May use core, store (incl. {@code store.pg}), data and base; used by the transport and the CLI.
 */
package dev.rlmmcp.cluster;

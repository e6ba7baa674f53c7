package dev.rlmmcp.cli;

import dev.rlmmcp.cluster.ClusterNode;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.transport.http.HttpEndpoint;
import java.time.Duration;

/**
 * A running serve and, in cluster mode, its node: stopped in order at shutdown. A cluster node first
 * hands its sessions over (no new work, calls under way finish, each session snapshotted and released,
 * its lease ended) while it still answers, then stops listening; one node alone stops as ever.
 */
record ClusterRun(ClusterNode node, HttpEndpoint endpoint, Assembly app) {

    /** Joins the cluster (the lease's first renewal and its heartbeat) before requests are served. */
    static void start(ClusterNode node, Sessions sessions) {
        if (node != null) {
            try {
                node.start(sessions);
            } catch (RuntimeException e) {
                node.close();
                throw e;
            }
        }
    }

    static void close(ClusterNode node) {
        if (node != null) {
            node.close();
        }
    }

    void close(Duration timeout) {
        try {
            if (node != null) {
                node.handOver(timeout);
            }
        } finally {
            try {
                endpoint.close();
            } finally {
                try {
                    app.close(timeout);
                } finally {
                    close(node);
                }
            }
        }
    }
}

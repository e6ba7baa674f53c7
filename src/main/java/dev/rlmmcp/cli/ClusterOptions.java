package dev.rlmmcp.cli;

import dev.rlmmcp.cluster.ClusterNode;
import dev.rlmmcp.cluster.ClusterSettings;
import dev.rlmmcp.store.S3SnapshotStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** serve's cluster options: with {@code --cluster-db}, this server is one node of a cluster (see docs/cluster.md). */
final class ClusterOptions {

    /** Shortest secret accepted: it signs every request between nodes (HMAC-SHA256). */
    static final int MIN_SECRET_CHARS = 16;

    @Option(
            names = "--cluster-db",
            paramLabel = "URL",
            defaultValue = "${env:RLM_CLUSTER_DB}",
            description = "Cluster mode: sessions' records, traces and ownership in this PostgreSQL database, "
                    + "postgresql://user:pass@host:port/db or jdbc:postgresql://... (RLM_CLUSTER_DB); needs "
                    + "--snapshot-s3, --node-address and RLM_CLUSTER_SECRET.")
    String clusterDb;

    @Option(
            names = "--node-address",
            paramLabel = "HOST:PORT",
            defaultValue = "${env:RLM_NODE_ADDRESS}",
            description = "Cluster mode: where the other nodes reach this one (its peer listener binds there; "
                    + "RLM_NODE_ADDRESS).")
    String nodeAddress;

    @Option(
            names = "--cluster-secret-file",
            paramLabel = "FILE",
            defaultValue = "${env:RLM_CLUSTER_SECRET_FILE}",
            description = "Cluster mode: a file holding the secret the nodes share, instead of RLM_CLUSTER_SECRET "
                    + "(RLM_CLUSTER_SECRET_FILE; at least " + MIN_SECRET_CHARS + " characters).")
    Path secretFile;

    @Option(
            names = "--cluster-lease-ms",
            paramLabel = "MS",
            defaultValue = "${env:RLM_CLUSTER_LEASE_MS:-3000}",
            description = "Cluster mode: how long a node's lease lasts; it renews it every quarter of that, and a "
                    + "dead node's sessions are taken over once it has expired (RLM_CLUSTER_LEASE_MS; "
                    + "default: ${DEFAULT-VALUE}).")
    long leaseMs;

    /** The cluster settings, or null without --cluster-db (one node, as ever); bad or missing pieces: one line. */
    ClusterSettings settings(CommandSpec spec, KernelOptions kernel, Map<String, String> env) {
        if (blank(clusterDb)) {
            KernelOptions.require(
                    spec, blank(nodeAddress), "--node-address is for cluster mode: it needs --cluster-db");
            KernelOptions.require(
                    spec, secretFile == null, "--cluster-secret-file is for cluster mode: it needs --cluster-db");
            return null;
        }
        KernelOptions.require(
                spec,
                !blank(kernel.snapshotS3),
                "--cluster-db needs --snapshot-s3 s3://bucket/prefix: the nodes share sessions' variables there");
        try {
            S3SnapshotStore.Location.parse(kernel.snapshotS3); // before the database is joined
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "--snapshot-s3: " + e.getMessage());
        }
        KernelOptions.require(
                spec, !kernel.ephemeral, "--cluster-db keeps sessions; it cannot be combined with --ephemeral");
        KernelOptions.require(
                spec,
                !blank(nodeAddress),
                "--cluster-db needs --node-address host:port (RLM_NODE_ADDRESS): where the other nodes reach this one");
        String bad = ClusterSettings.checkAddress(nodeAddress.strip());
        KernelOptions.require(spec, bad == null, "--node-address: " + bad + "; give host:port, e.g. 10.0.0.5:8766");
        KernelOptions.require(
                spec, leaseMs >= 400 && leaseMs <= 600_000, "--cluster-lease-ms must be 400..600000, not " + leaseMs);
        return new ClusterSettings(
                clusterDb.strip(), nodeAddress.strip(), secret(spec, env), Duration.ofMillis(leaseMs));
    }

    /** The shared secret, from RLM_CLUSTER_SECRET or --cluster-secret-file; never from a plain option. */
    private String secret(CommandSpec spec, Map<String, String> env) {
        String fromEnv = env.get("RLM_CLUSTER_SECRET");
        KernelOptions.require(
                spec,
                blank(fromEnv) || secretFile == null,
                "RLM_CLUSTER_SECRET and --cluster-secret-file are both set: keep one");
        String secret = fromEnv;
        if (secretFile != null) {
            try {
                secret = Files.readString(secretFile, StandardCharsets.UTF_8).strip();
            } catch (IOException e) {
                throw new ParameterException(
                        spec.commandLine(), "--cluster-secret-file " + secretFile + ": cannot read it (" + e + ")");
            }
        }
        KernelOptions.require(
                spec,
                !blank(secret),
                "--cluster-db needs the secret the nodes share: set RLM_CLUSTER_SECRET, or pass --cluster-secret-file");
        KernelOptions.require(
                spec,
                secret.strip().length() >= MIN_SECRET_CHARS,
                "the cluster secret (RLM_CLUSTER_SECRET or --cluster-secret-file) must have at least "
                        + MIN_SECRET_CHARS + " characters");
        return secret.strip();
    }

    /** Joins the cluster database as a new node; a URL or database that does not work: one line, password masked. */
    static ClusterNode join(CommandSpec spec, ClusterSettings settings) {
        try {
            return ClusterNode.open(settings);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(
                    spec.commandLine(),
                    "--cluster-db " + ClusterSettings.masked(settings.databaseUrl()) + ": "
                            + ClusterSettings.masked(String.valueOf(e.getMessage())));
        } catch (RuntimeException e) {
            throw new ParameterException(
                    spec.commandLine(),
                    "--cluster-db " + ClusterSettings.masked(settings.databaseUrl()) + ": cannot use the database: "
                            + ClusterSettings.masked(String.valueOf(e.getMessage())));
        }
    }

    private static boolean blank(String value) {
        return value == null || value.isBlank();
    }
}

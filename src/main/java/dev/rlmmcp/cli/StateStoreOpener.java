package dev.rlmmcp.cli;

import dev.rlmmcp.data.S3Store;
import dev.rlmmcp.store.ClusterSessionDatabase;
import dev.rlmmcp.store.S3SnapshotStore;
import dev.rlmmcp.store.StateStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Opens the state store on a thread of its own, so that start-up does not wait for SQLite. */
final class StateStoreOpener {

    private static final Logger log = LoggerFactory.getLogger(StateStoreOpener.class);

    private StateStoreOpener() {}

    /**
     * The store in {@code dir}, completed once open (exceptionally if it cannot be); with {@code s3}
     * and {@code mirror}, its snapshots, records and traces are kept in S3 too; with {@code cluster}
     * (cluster mode), records and traces are in the cluster's database and snapshots in S3 only. Opening
     * begins once {@code begin} completes (however it does).
     */
    static CompletableFuture<StateStore> open(
            Path dir,
            Duration snapshotDebounce,
            boolean durableReplies,
            S3Store s3,
            S3SnapshotStore.Location mirror,
            long fileSizeLimitBytes,
            ClusterSessionDatabase cluster,
            CompletableFuture<?> begin) {
        CompletableFuture<StateStore> store = new CompletableFuture<>();
        Runnable open = () -> {
            try {
                store.complete(
                        cluster == null
                                ? StateStore.open(dir, snapshotDebounce, durableReplies, s3, mirror, fileSizeLimitBytes)
                                : StateStore.openCluster(
                                        dir,
                                        snapshotDebounce,
                                        durableReplies,
                                        cluster,
                                        s3,
                                        mirror,
                                        fileSizeLimitBytes));
                log.info(
                        "state directory: {}{}",
                        dir,
                        cluster != null
                                ? " (a cache), sessions in the cluster database, snapshots in " + mirror
                                : mirror == null ? "" : ", snapshots also in " + mirror);
            } catch (RuntimeException e) {
                log.error("cannot open the state directory {}: {}", dir, e.getMessage());
                store.completeExceptionally(e);
            }
        };
        begin.whenComplete((ignored, notBegun) ->
                Thread.ofPlatform().daemon().name("state-store-open").start(open));
        return store;
    }
}

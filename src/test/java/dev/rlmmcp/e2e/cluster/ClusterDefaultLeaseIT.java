package dev.rlmmcp.e2e.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The cluster as an operator starts it, with the lease at its default, on a machine other work keeps busy
 * (a process spinning on every core): a rolling restart under load through the shipped nginx fails no call,
 * loses no change and runs none twice.
 */
class ClusterDefaultLeaseIT {

    @Test
    void aRollingRestartWithTheDefaultLeaseOnALoadedMachineFailsNoCall() throws Exception {
        try (LocalCluster cluster = LocalCluster.start(3, LocalCluster.DEFAULT_LEASE, List.of());
                CpuLoad busy = CpuLoad.onEveryCore()) {
            Balancer hashing = cluster.balancer(true);
            RollingRestart.Outcome outcome = RollingRestart.run(cluster, List.of(hashing), 6);
            assertThat(outcome.failures())
                    .as("failed calls; the cluster's logs:%s\n===== nginx\n%s", cluster.logs(), hashing.errorLog())
                    .isEmpty();
            assertThat(outcome.fewestCalls()).as("fewest calls of a client").isPositive();
        }
    }
}

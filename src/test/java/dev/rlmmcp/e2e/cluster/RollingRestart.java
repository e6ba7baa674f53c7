package dev.rlmmcp.e2e.cluster;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Every node of a cluster stopped (SIGTERM) and started again in turn while clients keep calling through
 * balancers, each counting up a variable in a session of its own: a call that fails, a change a reply
 * reported that is gone, and a call that ran twice all show in the count.
 */
final class RollingRestart {

    /** What went wrong, how many calls the client with the fewest made, and how many all made. */
    record Outcome(List<String> failures, int fewestCalls, int calls) {}

    private RollingRestart() {}

    /** {@code clients} clients, spread over {@code balancers}, calling while each node restarts. */
    static Outcome run(LocalCluster cluster, List<Balancer> balancers, int clients) throws Exception {
        AtomicBoolean restarting = new AtomicBoolean(true);
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        int[] calls = new int[clients];
        for (int c = 0; c < clients; c++) {
            int me = c;
            StatelessClient client =
                    new StatelessClient(balancers.get(c % balancers.size()).url());
            String session = client.newSession();
            client.execute(session, "i = 0");
            threads.add(Thread.ofPlatform().start(() -> {
                while (restarting.get()) {
                    try {
                        String out = client.print(session, "i += 1\nprint('i', i)");
                        calls[me]++;
                        if (!out.contains("i " + calls[me])) {
                            failures.add("client " + me + " call " + calls[me] + " (lost or doubled): " + out);
                            calls[me] = Integer.parseInt(out.replaceAll("(?s).*\\bi (\\d+).*", "$1"));
                        }
                    } catch (Exception e) {
                        failures.add("client " + me + " call " + (calls[me] + 1) + ": " + e.getMessage());
                        return;
                    }
                }
            }));
        }
        try {
            for (ClusterNode node : cluster.nodes()) {
                Thread.sleep(1000);
                node.stop();
                node.start();
            }
            Thread.sleep(1000);
        } finally {
            restarting.set(false);
            for (Thread t : threads) {
                t.join(TimeUnit.MINUTES.toMillis(2));
            }
        }
        Outcome outcome = new Outcome(
                List.copyOf(failures),
                Arrays.stream(calls).min().orElse(0),
                Arrays.stream(calls).sum());
        System.out.printf(
                "rolling restart: %d calls, %d failed or lost or doubled%n", outcome.calls(), failures.size());
        return outcome;
    }
}

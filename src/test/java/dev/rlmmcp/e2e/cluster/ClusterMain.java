package dev.rlmmcp.e2e.cluster;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The harness for bin/bench (and by hand): {@code ClusterMain NODES LEASE_MS [serve options...]} starts a
 * {@link LocalCluster} (LEASE_MS 0: plain single-node servers), prints {@code node I URL NODE_ADDRESS} per
 * node and {@code ready}, then answers one line per command read from stdin:
 * {@code balancer hash|rr I,J,...} → the balancer's URL; {@code kill I}, {@code stop I}, {@code start I},
 * {@code down I}, {@code up I} → {@code ok}; {@code owner SESSION} → the owner's index (-1: none);
 * {@code epochs SESSION} → epoch, snapshot epoch, snapshot generation. It stops everything at end of input.
 */
public final class ClusterMain {

    private ClusterMain() {}

    public static void main(String[] args) throws Exception {
        int count = Integer.parseInt(args[0]);
        long lease = Long.parseLong(args[1]);
        List<String> extra = Arrays.asList(args).subList(2, args.length);
        try (LocalCluster cluster = LocalCluster.start(count, lease, extra)) {
            for (ClusterNode node : cluster.nodes()) {
                System.out.println("node " + node.index() + " " + node.url() + " " + node.nodeAddress());
            }
            System.out.println("ready " + (cluster.network().isolated() ? "namespaces" : "loopback"));
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null) {
                String answer;
                try {
                    answer = answer(cluster, line.strip().split("\\s+"));
                } catch (Exception e) {
                    answer = "error " + e.getMessage().replace('\n', ' ');
                }
                System.out.println(answer);
                System.out.flush();
            }
        }
    }

    private static String answer(LocalCluster cluster, String[] command) throws Exception {
        return switch (command[0]) {
            case "balancer" -> {
                List<ClusterNode> upstream = new ArrayList<>();
                for (String i : command[2].split(",")) {
                    upstream.add(cluster.node(Integer.parseInt(i)));
                }
                yield cluster.balancer(upstream, command[1].equals("hash")).url();
            }
            case "kill" -> done(() -> cluster.node(index(command)).kill());
            case "stop" -> "ok " + cluster.node(index(command)).stop();
            case "start" -> done(() -> cluster.node(index(command)).start());
            case "down" -> done(() -> cluster.network().linkDown(index(command)));
            case "up" -> done(() -> cluster.network().linkUp(index(command)));
            case "owner" -> String.valueOf(cluster.owner(command[1]));
            case "epochs" -> Arrays.toString(cluster.db().epochs(command[1]));
            case "log" -> cluster.node(index(command)).log().replace('\n', '|');
            default -> "error unknown command " + command[0];
        };
    }

    private static int index(String[] command) {
        return Integer.parseInt(command[1]);
    }

    private static String done(Runnable action) {
        action.run();
        return "ok";
    }
}

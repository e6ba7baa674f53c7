package dev.rlmmcp.e2e.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * Three real nodes, each in a network namespace of its own, behind Debian's nginx with the shipped
 * configuration (consistent hashing, and round robin), on a real PostgreSQL and S3Proxy: sessions spread
 * over the nodes, survive kill -9 and a partition (fenced: the cut-off node overwrites nothing), a rolling
 * restart fails no call, and 200 clients each get their own answers.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterIT {

    private static final long LEASE_MS =
            5000; // above the default: a 2-core CI box under 200 clients starves heartbeats

    private LocalCluster cluster;
    private Balancer hashing;
    private Balancer roundRobin;

    /** On a failed test, the nodes' and nginx's logs. */
    @RegisterExtension
    final TestWatcher logs = new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
            if (cluster != null && roundRobin != null) {
                System.err.println("==== cluster logs after " + context.getDisplayName() + cluster.logs()
                        + "\n===== nginx (hash)\n" + hashing.errorLog() + "\n===== nginx (rr)\n"
                        + roundRobin.errorLog());
            }
        }
    };

    @BeforeAll
    void startCluster() throws Exception {
        cluster = LocalCluster.start(3, LEASE_MS, List.of());
        hashing = cluster.balancer(true);
        roundRobin = cluster.balancer(false);
    }

    @AfterAll
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @Order(1)
    void sessionsCreatedThroughEitherBalancerLandOnEveryNodeAndEveryCallWorks() throws Exception {
        for (Balancer balancer : List.of(hashing, roundRobin)) {
            StatelessClient client = new StatelessClient(balancer.url());
            Set<Integer> owners = new HashSet<>();
            List<String> sessions = new ArrayList<>();
            for (int i = 0; i < 9; i++) {
                String session = client.newSession();
                client.execute(session, "v = " + i);
                sessions.add(session);
                owners.add(cluster.owner(session));
            }
            if (balancer == roundRobin) {
                assertThat(owners).as("owners through round robin").containsExactlyInAnyOrder(0, 1, 2);
            } else { // each new session on a random key: all nine on one node has odds of 1 in 6,561
                assertThat(owners).as("owners through consistent hashing").hasSizeGreaterThan(1);
            }
            for (StatelessClient other :
                    List.of(new StatelessClient(hashing.url()), new StatelessClient(roundRobin.url()))) {
                for (int i = 0; i < sessions.size(); i++) {
                    assertThat(other.print(sessions.get(i), "print(v)")).contains(String.valueOf(i));
                }
            }
        }
        SessionClient mcp = new SessionClient(roundRobin.url());
        mcp.initialize();
        mcp.print("n = 0");
        for (int i = 1; i <= 6; i++) {
            assertThat(mcp.print("n += 1\nprint('n', n)")).contains("n " + i);
        }
    }

    @Test
    @Order(2)
    void twoHundredClientsOfFiftyCallsEachGetTheirOwnAnswers() throws Exception {
        StatelessClient setup = new StatelessClient(hashing.url());
        List<String> sessions = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
            sessions.add(setup.newSession());
        }
        ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            var http = Rpc.http();
            List<Future<?>> clients = new ArrayList<>();
            for (int c = 0; c < 200; c++) {
                String session = sessions.get(c % sessions.size());
                int me = c;
                clients.add(pool.submit(() -> {
                    StatelessClient client = new StatelessClient(hashing.url(), http);
                    for (int k = 0; k < 50; k++) {
                        String token = "c" + me + "k" + k;
                        String out = client.print(session, "print('" + token + "')");
                        if (!out.strip().equals(token) && !out.contains("\"" + token + "\"")) {
                            wrong.add(token + " got " + out);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> client : clients) {
                client.get(5, TimeUnit.MINUTES);
            }
        }
        assertThat(wrong).isEmpty();
    }

    @Test
    @Order(3)
    void afterKillDashNineTheNextCallsResumeEverySessionElsewhereWithEveryVariableItsRepliesReported()
            throws Exception {
        StatelessClient client = new StatelessClient(hashing.url());
        Map<String, String> sessions = new LinkedHashMap<>();
        for (int i = 0; i < 9; i++) {
            String session = client.newSession();
            client.execute(session, "a = " + i);
            client.execute(session, "b = 'b" + i + "' * 3");
            client.execute(session, "c = list(range(" + i + "))\nd = {'k': a}");
            sessions.put(session, "%d b%db%db%d %s {'k': %d}".formatted(i, i, i, i, range(i), i));
        }
        int victim = mostOwning(sessions.keySet());
        cluster.node(victim).kill();
        try {
            for (var entry : sessions.entrySet()) {
                String out = client.print(entry.getKey(), "print(a, b, c, d)");
                assertThat(out).as(entry.getKey()).contains(entry.getValue());
                assertThat(cluster.owner(entry.getKey())).isNotEqualTo(victim);
            }
        } finally {
            cluster.node(victim).start();
        }
    }

    private static String range(int n) {
        return java.util.stream.IntStream.range(0, n)
                .mapToObj(String::valueOf)
                .collect(java.util.stream.Collectors.joining(", ", "[", "]"));
    }

    /** The node that owns most of these sessions. */
    private int mostOwning(Set<String> sessions) {
        int[] count = new int[3];
        for (String s : sessions) {
            int owner = cluster.owner(s);
            if (owner >= 0) { // a session no node holds now counts for none
                count[owner]++;
            }
        }
        int best = 0;
        for (int i = 1; i < 3; i++) {
            best = count[i] > count[best] ? i : best;
        }
        return best;
    }

    @Test
    @Order(4)
    void aNodeCutOffWhileItOwnsSessionsLosesThemAndOverwritesNothingWhenItComesBack() throws Exception {
        Assumptions.assumeTrue(cluster.network().isolated(), "no network namespaces: a link cannot go down");
        StatelessClient client = new StatelessClient(hashing.url());
        String session = sessionOwnedBy(2);
        client.execute(session, "x = 'before'");
        long[] before = cluster.db().epochs(session);
        CountDownLatch sent = new CountDownLatch(1);
        Thread zombie = Thread.ofVirtual().start(() -> {
            try {
                sent.countDown();
                new StatelessClient(cluster.node(2).url())
                        .execute(session, "import time\ntime.sleep(2)\nx = 'zombie'\nprint('zombie')");
            } catch (Exception expected) {
                // the node is cut off: this call gets no answer
            }
        });
        sent.await();
        Thread.sleep(300);
        cluster.network().linkDown(2);
        try {
            assertThat(client.readAgainIfItMayHaveRun(session, "print(repr(x))"))
                    .contains("'before'");
            assertThat(cluster.owner(session)).isIn(0, 1);
            client.execute(session, "x = 'after'");
        } finally {
            cluster.network().linkUp(2);
        }
        Thread.sleep(3 * LEASE_MS);
        zombie.join(TimeUnit.SECONDS.toMillis(10));
        assertThat(client.print(session, "print(repr(x))")).contains("'after'");
        assertThat(new StatelessClient(cluster.node(2).url()).print(session, "print(repr(x))"))
                .contains("'after'");
        long[] after = cluster.db().epochs(session);
        assertThat(after[0]).as("epoch").isGreaterThan(before[0]);
        assertThat(after[1]).as("snapshot epoch").isEqualTo(after[0]);
        assertThat(String.join("\n", cluster.db().trace(session))).doesNotContain("zombie");
        assertThat(cluster.db().record(session)).doesNotContain("zombie");
        assertThat(s3FilesContaining(session, "zombie")).isEmpty();
    }

    /**
     * A new session that node {@code node} owns: made there (a session is created where its request lands). Not
     * through a balancer, which skips a node for its fail_timeout after a refused connect, as when the node was
     * just restarted by the test before.
     */
    private String sessionOwnedBy(int node) throws Exception {
        String session = new StatelessClient(cluster.node(node).url()).newSession();
        assertThat(cluster.owner(session))
                .as("owner of a session made on node " + node)
                .isEqualTo(node);
        return session;
    }

    private List<Path> s3FilesContaining(String session, String text) throws Exception {
        List<Path> found = new ArrayList<>();
        try (Stream<Path> files = Files.walk(cluster.s3Dir())) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                if (file.toString().contains(session)
                        && new String(Files.readAllBytes(file), java.nio.charset.StandardCharsets.ISO_8859_1)
                                .contains(text)) {
                    found.add(file);
                }
            }
        }
        return found;
    }

    @Test
    @Order(5)
    void aRollingRestartOfEveryNodeWhileClientsKeepCallingFailsNoCall() throws Exception {
        RollingRestart.Outcome outcome = RollingRestart.run(cluster, List.of(hashing, roundRobin), 6);
        assertThat(outcome.failures()).isEmpty();
        assertThat(outcome.fewestCalls()).as("fewest calls of a client").isPositive();
    }

    @Test
    @Order(6)
    void aCallForwardedToAnOwnerRestartedAtItsAddressRunsExactlyOnce() throws Exception {
        String session = new StatelessClient(cluster.node(2).url()).newSession(); // created where it lands
        new StatelessClient(cluster.node(2).url()).execute(session, "runs = []");
        for (int i = 1; i <= 20; i++) {
            ClusterNode owner = cluster.node(cluster.owner(session));
            StatelessClient forwarder =
                    new StatelessClient(cluster.node((owner.index() + 1) % 3).url());
            // the forwarder now routes the session to its owner, over a pooled connection
            assertThat(forwarder.print(session, "print('runs', len(runs))").strip())
                    .isEqualTo("runs " + (i - 1));
            owner.stop();
            owner.start(); // the same address, a new node id
            String out = forwarder.print(session, "runs.append(1)\nprint('runs', len(runs))");
            assertThat(out.strip())
                    .as("restart " + i + " of node " + owner.index())
                    .isEqualTo("runs " + i);
        }
    }

    @Test
    @Order(7)
    void everyRefusalOfAClosingNodeIsItsOwnJson503SayingTheCallRanNowhereOnBothPorts() throws Exception {
        ClusterNode closing = cluster.node(1);
        String session = new StatelessClient(closing.url()).newSession();
        AtomicBoolean stopping = new AtomicBoolean(true);
        ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
        int[] refusals = new int[1];
        var http = Rpc.http();
        List<Thread> askers = new ArrayList<>();
        for (String base : List.of(closing.url(), "http://" + closing.nodeAddress())) {
            askers.add(Thread.ofPlatform().start(() -> {
                while (stopping.get()) {
                    try {
                        var reply = http.send(
                                java.net.http.HttpRequest.newBuilder(java.net.URI.create(base + "/mcp"))
                                        .header("Content-Type", "application/json")
                                        .header("Accept", "application/json, text/event-stream")
                                        .header("MCP-Protocol-Version", "2026-07-28")
                                        .header("Mcp-Param-Session-Id", session)
                                        .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{}"))
                                        .build(),
                                java.net.http.HttpResponse.BodyHandlers.ofString());
                        if (reply.statusCode() == 503) {
                            synchronized (refusals) {
                                refusals[0]++;
                            }
                            if (!reply.headers()
                                            .firstValue("Content-Type")
                                            .orElse("")
                                            .startsWith("application/json")
                                    || reply.headers().firstValue("Retry-After").isEmpty()
                                    || !reply.headers()
                                            .firstValue("Rlm-Outcome")
                                            .orElse("")
                                            .equals("not-run")
                                    || !reply.body().contains("\"jsonrpc\"")) {
                                wrong.add(base + ": " + reply.headers().map() + " " + reply.body());
                            }
                        }
                    } catch (java.io.IOException e) {
                        // the port is closed: the process is (nearly) gone
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }));
        }
        try {
            Thread.sleep(300);
            assertThat(closing.stop())
                    .as("exit status after SIGTERM (128 + 15)")
                    .isEqualTo(143);
        } finally {
            stopping.set(false);
            for (Thread asker : askers) {
                asker.join(TimeUnit.SECONDS.toMillis(30));
            }
            closing.start();
        }
        assertThat(wrong)
                .as("refusals of the closing node (of %d)", refusals[0])
                .isEmpty();
    }

    @Test
    @Order(8)
    void aPostgresOutageThroughNginxAnswersNo502AndLosesNoAcknowledgedChange() throws Exception {
        FaultLoad load = FaultLoad.start(hashing.url(), 8);
        try {
            Thread.sleep(2000);
            cluster.postgres().stop();
            Thread.sleep(6000);
            cluster.postgres().startAgain();
            Thread.sleep(8000);
        } finally {
            load.close();
        }
        answeredOnlyByTheProduct(load, "PostgreSQL outage");
        assertThat(load.acknowledged()).isPositive();
        nothingAcknowledgedLostEvenAfterKillDashNine(load);
    }

    @Test
    @Order(1)
    void aSessionMadeThroughTheHashingBalancerIsOwnedByTheNodeItsCallsReachSoNoneIsForwarded() throws Exception {
        StatelessClient client = new StatelessClient(hashing.url());
        List<String> sessions = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            sessions.add(client.newSession());
        }
        int forwardedByRoundRobin = 0;
        for (String session : sessions) {
            assertThat(session).as("named after the key nginx hashed").matches("s-[0-9a-f]{32}");
            String owner = cluster.db().ownerNode(session);
            var direct = call(hashing.url(), session);
            assertThat(direct.headers().allValues("Rlm-Node")).containsExactly(owner);
            assertThat(direct.headers().firstValue("Rlm-Forwarded-By"))
                    .as("forwarded through consistent hashing: " + session)
                    .isEmpty();
            var spread = call(roundRobin.url(), session);
            assertThat(spread.headers().allValues("Rlm-Node")).containsExactly(owner);
            forwardedByRoundRobin +=
                    spread.headers().firstValue("Rlm-Forwarded-By").isPresent() ? 1 : 0;
        }
        assertThat(forwardedByRoundRobin)
                .as("calls round robin sent to another node, which forwarded them")
                .isPositive();
    }

    @Test
    @Order(1)
    void anMcpSessionInitializedThroughTheHashingBalancerIsHomedWhereItsRequestsLand() throws Exception {
        for (int i = 0; i < 4; i++) {
            SessionClient mcp = new SessionClient(hashing.url());
            assertThat(mcp.initialize()).as("named after the key nginx hashed").matches("s-[0-9a-f]{32}");
            for (int k = 0; k < 3; k++) {
                var reply = mcp.reply("rlm_execute", Map.of("code", "x = " + k));
                assertThat(reply.statusCode()).as(reply.body()).isEqualTo(200);
                assertThat(reply.headers().firstValue("Rlm-Forwarded-By")).isEmpty();
            }
        }
    }

    /** rlm_execute in {@code session} sent to {@code url} (a balancer or a node), answered 200; the reply. */
    private static java.net.http.HttpResponse<String> call(String url, String session) throws Exception {
        var reply = Rpc.http()
                .send(
                        new StatelessClient(url)
                                .toolCall(1, "rlm_execute", Map.of("session_id", session, "code", "print(1)"))
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(reply.statusCode()).as(reply.body()).isEqualTo(200);
        return reply;
    }

    @Test
    @Order(9)
    void everyReplyNamesTheNodeThatRanItAndRlmSessionsNamesEveryOwner() throws Exception {
        String session = new StatelessClient(cluster.node(1).url()).newSession();
        String owner = cluster.db().ownerNode(session);
        for (ClusterNode node : cluster.nodes()) { // node 1 runs it, the others forward it there
            var reply = call(node.url(), session);
            assertThat(reply.headers().allValues("Rlm-Node"))
                    .as("through node " + node.index())
                    .containsExactly(owner);
        }
        for (ClusterNode node : cluster.nodes()) {
            var listed =
                    Rpc.content(new StatelessClient(node.url()).call("rlm_sessions", java.util.Map.of("limit", 200)));
            for (var entry : listed.path("sessions")) {
                // a session no node holds now (released, its owner gone) names none
                assertThat(entry.has("owner_node") || entry.has("owner_gone"))
                        .as("owner_node of " + entry)
                        .isTrue();
                if (entry.path("session_id").asText().equals(session)) {
                    assertThat(entry.path("owner_node").asText()).isEqualTo(owner);
                }
            }
        }
    }

    @Test
    @Order(10)
    void anS3OutageSaysNotSavedAndLosesNothingAcknowledgedEvenAfterKillDashNine() throws Exception {
        FaultLoad load = FaultLoad.start(hashing.url(), 4);
        int notSavedBefore;
        try {
            Thread.sleep(2000);
            notSavedBefore = load.notSaved.get();
            cluster.s3().stop();
            Thread.sleep(6000);
            cluster.s3().startAgain();
            Thread.sleep(6000);
        } finally {
            load.close();
        }
        answeredOnlyByTheProduct(load, "S3 outage");
        assertThat(load.notSaved.get())
                .as("replies saying not_saved during the outage")
                .isGreaterThan(notSavedBefore);
        nothingAcknowledgedLostEvenAfterKillDashNine(load);
    }

    /** What the clients saw in {@code outage}; every answer was the product's own, none slower than allowed. */
    private static void answeredOnlyByTheProduct(FaultLoad load, String outage) {
        System.err.printf(
                "%s: %d acknowledged, %d refused (503), %d unknown (502), %d not_saved%n",
                outage, load.acknowledged(), load.refused.get(), load.unknown.get(), load.notSaved.get());
        assertThat(load.problems).isEmpty();
    }

    /** Every change a reply acknowledged is there, and still after kill -9 of the node that owns most sessions. */
    private void nothingAcknowledgedLostEvenAfterKillDashNine(FaultLoad load) throws Exception {
        StatelessClient client = new StatelessClient(hashing.url());
        assertThat(load.lost(client)).as("acknowledged changes missing").isEmpty();
        int victim = mostOwning(load.acked.keySet());
        cluster.node(victim).kill();
        try {
            assertThat(load.lost(client))
                    .as("acknowledged changes missing after kill -9")
                    .isEmpty();
        } finally {
            cluster.node(victim).start();
        }
    }
}

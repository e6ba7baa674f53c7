package dev.rlmmcp.e2e.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Clients calling through a balancer while a fault happens, as an operator's clients would. Each call sets a
 * variable of its own ({@code v<k> = k}), so a call refused (503, it ran nowhere) or of unknown outcome (the
 * node's own 502) is simply sent again. Collected: every answer that is not the product's own (nginx's HTML
 * 502/503/504), every answer slower than {@link #SLOW}, every error, and every change a reply acknowledged
 * (no {@code not_saved} naming it), which must be there afterwards.
 */
final class FaultLoad implements AutoCloseable {

    static final Duration SLOW = Duration.ofSeconds(15);

    private final HttpClient http = Rpc.http();
    /** The requests, as a stateless client makes them (sent here, to see every status). */
    private final StatelessClient requests;

    private final AtomicBoolean running = new AtomicBoolean(true);
    private final List<Thread> clients = new ArrayList<>();
    private final AtomicInteger ids = new AtomicInteger();
    final ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
    /** session → the k of every change a reply acknowledged. */
    final Map<String, ConcurrentLinkedQueue<Integer>> acked = new ConcurrentHashMap<>();

    final AtomicInteger refused = new AtomicInteger();
    final AtomicInteger unknown = new AtomicInteger();
    final AtomicInteger notSaved = new AtomicInteger();

    private FaultLoad(String url) {
        this.requests = new StatelessClient(url, http);
    }

    /** {@code count} clients, each in a session of its own, calling until {@link #close}. */
    static FaultLoad start(String url, int count) throws Exception {
        FaultLoad load = new FaultLoad(url);
        for (int c = 0; c < count; c++) {
            String session = load.requests.newSession();
            load.acked.put(session, new ConcurrentLinkedQueue<>());
            load.clients.add(Thread.ofPlatform().start(() -> load.run(session)));
        }
        return load;
    }

    int acknowledged() {
        return acked.values().stream().mapToInt(ConcurrentLinkedQueue::size).sum();
    }

    private void run(String session) {
        for (int k = 1; running.get(); ) {
            try {
                if (call(session, k)) {
                    k++;
                }
            } catch (IOException e) {
                problems.add(session + " v" + k + ": " + e);
                k++;
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** One attempt of call k; whether the client goes on to the next call. */
    private boolean call(String session, int k) throws IOException, InterruptedException {
        int id = ids.incrementAndGet();
        HttpRequest request = requests.toolCall(
                        id, "rlm_execute", Map.of("session_id", session, "code", "v%d = %d".formatted(k, k)))
                .timeout(SLOW.plusSeconds(5))
                .build();
        long started = System.nanoTime();
        HttpResponse<String> reply = http.send(request, HttpResponse.BodyHandlers.ofString());
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        String what = session + " v" + k + " HTTP " + reply.statusCode() + " after " + ms + " ms";
        if (ms > SLOW.toMillis()) {
            problems.add(what + ": slower than " + SLOW.toSeconds() + " s");
        }
        boolean json = reply.headers().firstValue("Content-Type").orElse("").contains("json")
                || reply.headers().firstValue("Content-Type").orElse("").startsWith("text/event-stream");
        if (!json) {
            problems.add(
                    what + ": not the product's answer: " + reply.body().strip().replaceAll("\\s+", " "));
            Thread.sleep(500);
            return false;
        }
        if (reply.statusCode() == 503 || reply.statusCode() == 502) {
            (reply.statusCode() == 503 ? refused : unknown).incrementAndGet();
            long wait = reply.headers().firstValueAsLong("Retry-After").orElse(1);
            Thread.sleep(Math.min(1000, wait * 1000));
            return false; // ran nowhere, or set v<k> at most: the same call again
        }
        JsonNode response = Rpc.response(reply, id, what);
        if (response.has("error") || response.path("result").path("isError").asBoolean()) {
            problems.add(what + ": " + response);
            return true;
        }
        JsonNode content = Rpc.content(response.path("result"));
        boolean saved = true;
        for (JsonNode name : content.path("not_saved")) {
            saved &= !name.asText().equals("v" + k);
        }
        if (!saved || content.has("not_saved")) {
            notSaved.incrementAndGet();
        }
        if (saved) {
            acked.get(session).add(k);
        }
        return true;
    }

    /** The acknowledged changes missing from each session now, read through {@code client}. */
    List<String> lost(StatelessClient client) throws Exception {
        List<String> lost = new ArrayList<>();
        for (var entry : acked.entrySet()) {
            String names = entry.getValue().stream()
                    .map(k -> "'v" + k + "'")
                    .reduce((a, b) -> a + "," + b)
                    .orElse("");
            String out = client.print(
                    entry.getKey(), "print('missing', [n for n in [" + names + "] if n not in globals()])");
            if (!out.contains("missing []")) {
                lost.add(entry.getKey() + ": " + out);
            }
        }
        return lost;
    }

    @Override
    public void close() throws InterruptedException {
        running.set(false);
        for (Thread client : clients) {
            client.join(TimeUnit.SECONDS.toMillis(60));
        }
    }
}

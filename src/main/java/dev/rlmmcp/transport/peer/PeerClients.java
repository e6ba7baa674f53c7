package dev.rlmmcp.transport.peer;

import dev.rlmmcp.cluster.Router;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * The HTTP/1.1 clients that send requests to peers, one per peer address so that its pooled keep-alive
 * connections can be dropped together. A pooled connection to a node cut off from the network needs no
 * connect, so no connect timeout protects a request on it: the wait for the owner's answer is bounded by the
 * owner's lease instead. While the response headers have not come, the route is checked every
 * {@value #CHECK_MS} ms; once the cluster has named no node at the owner's address for {@link Reroute#PATIENCE}
 * (its lease ran out and the session moved elsewhere), the request is cancelled and fails as
 * {@link PeerProxy.Unanswered}: it may have run there, so it is never sent again. Only a refused or timed-out
 * connect means the owner cannot have received it ({@link PeerProxy.Unreachable}). A response that has begun is
 * never cut: a live owner's long event stream is legitimate.
 */
public final class PeerClients {

    static final long CHECK_MS = 250;

    private final Map<String, HttpClient> clients = new ConcurrentHashMap<>();

    /**
     * Sends {@code request} to {@code owner} and waits for its response headers while {@code stillOwner} says
     * the cluster names a node at its address, and {@link Reroute#PATIENCE} after. Throws
     * {@link PeerProxy.Unreachable} when the owner could not be connected, {@link PeerProxy.Unanswered} when it
     * may have received the request and did not answer.
     */
    public HttpResponse<InputStream> send(HttpRequest request, Router.Remote owner, BooleanSupplier stillOwner)
            throws IOException {
        HttpClient client = clients.computeIfAbsent(owner.address(), address -> newClient());
        CompletableFuture<HttpResponse<InputStream>> pending =
                client.sendAsync(request, HttpResponse.BodyHandlers.ofInputStream());
        long givenUpAt = 0;
        try {
            while (true) {
                try {
                    return pending.get(CHECK_MS, TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    givenUpAt = giveUpAt(givenUpAt, stillOwner);
                    if (givenUpAt != 0 && System.nanoTime() - givenUpAt > 0) {
                        pending.cancel(true);
                        drop(owner.address(), client);
                        throw new PeerProxy.Unanswered(owner, "no answer, and the cluster names another owner");
                    }
                }
            }
        } catch (ExecutionException | CancellationException e) {
            drop(owner.address(), client);
            Throwable cause = e.getCause();
            if (cause instanceof ConnectException || cause instanceof HttpConnectTimeoutException) {
                throw new PeerProxy.Unreachable(owner, (IOException) cause);
            }
            throw new PeerProxy.Unanswered(owner, String.valueOf(cause)); // sent, or some of it: it may have run
        } catch (InterruptedException e) {
            pending.cancel(true);
            drop(owner.address(), client);
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while forwarding to " + owner.nodeId(), e);
        }
    }

    /**
     * When to stop waiting for an owner's answer: 0 (not yet) while {@code stillOwner} holds, else {@code since}
     * or, when it has just stopped holding, {@link Reroute#PATIENCE} from now.
     */
    static long giveUpAt(long since, BooleanSupplier stillOwner) {
        if (stillOwner.getAsBoolean()) {
            return 0;
        }
        return since != 0 ? since : System.nanoTime() + Reroute.PATIENCE.toNanos() | 1;
    }

    /**
     * Forgets a client whose request to the peer failed or was cancelled: later requests open fresh connections
     * instead of reusing one that may lead nowhere. Requests still running on it finish (each bounded as above).
     */
    private void drop(String address, HttpClient client) {
        if (clients.remove(address, client)) {
            client.shutdown();
        }
    }

    private static HttpClient newClient() {
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(1))
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
    }
}

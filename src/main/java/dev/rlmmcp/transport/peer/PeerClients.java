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
 * {@value #CHECK_MS} ms; once the cluster no longer names that owner (its lease ran out, and it fenced itself
 * before that, so nothing the request did there is kept), the request is cancelled and the owner treated as
 * unreachable. A response that has begun is never cut: a live owner's long event stream is legitimate.
 */
public final class PeerClients {

    static final long CHECK_MS = 250;

    private final Map<String, HttpClient> clients = new ConcurrentHashMap<>();

    /**
     * Sends {@code request} to {@code owner} and waits for its response headers while {@code stillOwner} says
     * the cluster still names it. Throws {@link PeerProxy.Unreachable} when the owner could not be connected,
     * or stopped being the owner before it answered.
     */
    public HttpResponse<InputStream> send(HttpRequest request, Router.Remote owner, BooleanSupplier stillOwner)
            throws IOException {
        HttpClient client = clients.computeIfAbsent(owner.address(), address -> newClient());
        CompletableFuture<HttpResponse<InputStream>> pending =
                client.sendAsync(request, HttpResponse.BodyHandlers.ofInputStream());
        try {
            while (true) {
                try {
                    return pending.get(CHECK_MS, TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    if (!stillOwner.getAsBoolean()) {
                        pending.cancel(true);
                        drop(owner.address(), client);
                        throw new PeerProxy.Unreachable(
                                owner, new IOException("no answer, and the cluster no longer names it the owner"));
                    }
                }
            }
        } catch (ExecutionException | CancellationException e) {
            drop(owner.address(), client);
            Throwable cause = e.getCause();
            if (cause instanceof ConnectException || cause instanceof HttpConnectTimeoutException) {
                throw new PeerProxy.Unreachable(owner, (IOException) cause);
            }
            throw cause instanceof IOException io ? io : new IOException("forwarding to " + owner.nodeId(), e);
        } catch (InterruptedException e) {
            pending.cancel(true);
            drop(owner.address(), client);
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while forwarding to " + owner.nodeId(), e);
        }
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

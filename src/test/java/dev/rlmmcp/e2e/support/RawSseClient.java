package dev.rlmmcp.e2e.support;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A raw client of legacy HTTP+SSE: answers come on the GET /sse stream, each message is POSTed to the
 * endpoint that stream named; a POST refused at once (400, 413) has its error in its own body, which
 * is read into the received messages too.
 */
final class RawSseClient extends RawClient {

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final String baseUrl;
    private final CompletableFuture<String> endpoint = new CompletableFuture<>();

    private RawSseClient(String baseUrl) {
        this.baseUrl = baseUrl;
    }

    static RawSseClient start(String baseUrl) throws IOException {
        RawSseClient client = new RawSseClient(baseUrl);
        client.open();
        client.initialize();
        return client;
    }

    private void open() throws IOException {
        HttpRequest get = HttpRequest.newBuilder(URI.create(baseUrl + "/sse"))
                .header("Accept", "text/event-stream")
                .GET()
                .build();
        http.sendAsync(get, HttpResponse.BodyHandlers.ofInputStream()).thenAccept(response -> {
            try (InputStream body = response.body()) {
                RawHttpClient.readEvents(body, this);
            } catch (IOException e) {
                note("the SSE stream ended: " + e);
            }
        });
        try {
            endpoint.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException("no endpoint event on " + baseUrl + "/sse", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    void endpoint(String path) {
        endpoint.complete(path);
    }

    /** POSTs the message; returns once the server took it (202) or refused it (its error is then received). */
    @Override
    public void send(String message) throws IOException {
        HttpRequest post = HttpRequest.newBuilder(URI.create(baseUrl + endpoint.join()))
                .header("Content-Type", "application/json")
                .timeout(Duration.ofMinutes(2))
                .POST(HttpRequest.BodyPublishers.ofString(message))
                .build();
        try {
            HttpResponse<String> response = http.send(post, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            if (response.statusCode() != 202 && !response.body().isBlank()) {
                receive(response.body());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    @Override
    public void close() {
        http.shutdownNow();
    }

    @Override
    public String toString() {
        return "/sse";
    }
}

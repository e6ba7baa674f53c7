package dev.rlmmcp.e2e.support;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A raw client of Streamable HTTP: each message its own POST, sent without waiting for the answer, so
 * that a cancellation can follow a call that is still running. A reply body (a JSON message, or an
 * event stream of them, or an error body with any status) is read into the received messages.
 */
final class RawHttpClient extends RawClient {

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final URI url;
    private volatile String session;

    private RawHttpClient(String url) {
        this.url = URI.create(url);
    }

    static RawHttpClient start(String url) throws IOException {
        RawHttpClient client = new RawHttpClient(url);
        client.initialize();
        return client;
    }

    @Override
    public void send(String message) {
        HttpRequest.Builder request = HttpRequest.newBuilder(url)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .timeout(Duration.ofMinutes(3))
                .POST(HttpRequest.BodyPublishers.ofString(message));
        if (session != null) {
            request.header("Mcp-Session-Id", session);
        }
        Thread.ofVirtual().start(() -> exchange(request.build()));
    }

    private void exchange(HttpRequest request) {
        try {
            HttpResponse<InputStream> response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
            response.headers().firstValue("Mcp-Session-Id").ifPresent(id -> {
                if (session == null) {
                    session = id;
                }
            });
            boolean stream =
                    response.headers().firstValue("Content-Type").orElse("").startsWith("text/event-stream");
            try (InputStream body = response.body()) {
                if (stream) {
                    readEvents(body, this);
                } else {
                    String text = new String(body.readAllBytes(), StandardCharsets.UTF_8);
                    if (!text.isBlank()) {
                        receive(text);
                    }
                }
            }
        } catch (IOException e) {
            note("POST failed: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Reads an event stream: each event's data is one message; the endpoint event (legacy SSE) is handed to {@code client}. */
    static void readEvents(InputStream in, RawClient client) throws IOException {
        BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        String event = "message";
        StringBuilder data = new StringBuilder();
        String line;
        while ((line = reader.readLine()) != null) {
            if (line.isEmpty()) {
                if (!data.isEmpty()) {
                    if (event.equals("endpoint") && client instanceof RawSseClient sse) {
                        sse.endpoint(data.toString());
                    } else {
                        client.receive(data.toString());
                    }
                }
                event = "message";
                data.setLength(0);
            } else if (line.startsWith("event:")) {
                event = line.substring(6).trim();
            } else if (line.startsWith("data:")) {
                data.append(line.substring(5).strip());
            }
        }
    }

    @Override
    public void close() {
        http.shutdownNow();
    }

    @Override
    public String toString() {
        return "/mcp";
    }
}

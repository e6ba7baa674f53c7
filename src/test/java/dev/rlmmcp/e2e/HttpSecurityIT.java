package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.RunningServer;
import dev.rlmmcp.e2e.support.ServerProcess;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** Authentication, DNS-rebinding protection, CORS, the access log, the port file and shutdown, from outside. */
class HttpSecurityIT {

    private static final String KEY = "security-it-key-9c4e1a";
    private static final String APP = "https://app.example.com";
    private static final String INIT = """
            {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}""";

    @TempDir
    static Path dir;

    @RegisterExtension
    static final RunningServer server = RunningServer.http(
            Map.of("RLM_API_KEY", KEY),
            () -> List.of(
                    "--cors-origins", APP, "--port-file", dir.resolve("port").toString()));

    private static final HttpClient http = HttpClient.newHttpClient();

    private static HttpResponse<String> send(String method, String path, String body, String... headers)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.baseUrl() + path))
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            request.header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream");
        }
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static int port() {
        return URI.create(server.baseUrl()).getPort();
    }

    @Test
    void everyPathButHealthzAndUiNeedsTheKey() throws Exception {
        assertThat(send("GET", "/healthz", null).statusCode()).isEqualTo(200);
        for (String[] route : new String[][] {
            {"POST", "/mcp"}, {"POST", "/rpc"}, {"GET", "/health"}, {"GET", "/sse"}, {"POST", "/message"}
        }) {
            HttpResponse<String> refused = send(route[0], route[1], route[0].equals("POST") ? INIT : null);
            assertThat(refused.statusCode()).as(route[1]).isEqualTo(401);
            assertThat(refused.headers().firstValue("WWW-Authenticate").orElse(""))
                    .startsWith("Bearer");
        }
        assertThat(send("POST", "/mcp", INIT, "Authorization", "Bearer wrong-" + KEY)
                        .statusCode())
                .isEqualTo(401);
        assertThat(send("POST", "/mcp", INIT, "Authorization", "Bearer " + KEY).statusCode())
                .isEqualTo(200);
        assertThat(send("GET", "/health", null, "Authorization", "bearer " + KEY)
                        .statusCode())
                .isEqualTo(200);
        // the trace viewer at /ui authenticates by itself: a page sends the browser to its login form
        HttpResponse<String> page = send("GET", "/ui/", null);
        assertThat(page.statusCode()).isEqualTo(303);
        assertThat(page.headers().firstValue("Location").orElse("")).contains("/ui/login");
        assertThat(send("GET", "/ui/api/sessions", null).statusCode()).isEqualTo(401);
        assertThat(send("GET", "/ui/api/sessions", null, "Authorization", "Bearer " + KEY)
                        .statusCode())
                .isEqualTo(200);
    }

    @Test
    void aTokenInTheQueryIsAcceptedOnlyForGetSse() throws Exception {
        HttpResponse<InputStream> stream = http.send(
                HttpRequest.newBuilder(URI.create(server.baseUrl() + "/sse?token=" + KEY))
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertThat(stream.statusCode()).isEqualTo(200);
        String endpoint;
        try (BufferedReader sse = new BufferedReader(new InputStreamReader(stream.body(), StandardCharsets.UTF_8))) {
            assertThat(sse.readLine()).isEqualTo("event: endpoint");
            endpoint = sse.readLine().substring("data: ".length());
        }
        assertThat(send("POST", endpoint + "&token=" + KEY, INIT).statusCode()).isEqualTo(401);
        assertThat(send("POST", "/mcp?token=" + KEY, INIT).statusCode()).isEqualTo(401);
        assertThat(send("POST", "/rpc?token=" + KEY, "{\"method\":\"tools/list\"}")
                        .statusCode())
                .isEqualTo(401);
    }

    @Test
    void foreignHostsAndOriginsAreRefused() throws Exception {
        assertThat(rawStatus("evil.example.com")).isEqualTo(403);
        assertThat(rawStatus("evil.example.com:" + port())).isEqualTo(403);
        assertThat(rawStatus("localhost:" + port())).isEqualTo(200);
        assertThat(rawStatus("127.0.0.1:" + port())).isEqualTo(200);
        String auth = "Bearer " + KEY;
        assertThat(send("POST", "/mcp", INIT, "Authorization", auth, "Origin", "http://evil.example.com")
                        .statusCode())
                .isEqualTo(403);
        assertThat(send("GET", "/healthz", null, "Origin", "http://evil.example.com")
                        .statusCode())
                .isEqualTo(403);
        assertThat(send("POST", "/mcp", INIT, "Authorization", auth, "Origin", "http://localhost:" + port())
                        .statusCode())
                .isEqualTo(200);
        assertThat(send("POST", "/mcp", INIT, "Authorization", auth, "Origin", APP)
                        .statusCode())
                .isEqualTo(200);
    }

    /** Status of GET /healthz sent with this Host header (HttpClient will not set Host itself). */
    private static int rawStatus(String host) throws Exception {
        try (Socket socket = new Socket("127.0.0.1", port())) {
            OutputStream out = socket.getOutputStream();
            out.write(("GET /healthz HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String status = new BufferedReader(
                            new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII))
                    .readLine();
            return Integer.parseInt(status.split(" ")[1]);
        }
    }

    @Test
    void corsIsForTheConfiguredOriginOnly() throws Exception {
        HttpResponse<String> preflight = send(
                "OPTIONS",
                "/mcp",
                null,
                "Origin",
                APP,
                "Access-Control-Request-Method",
                "POST",
                "Access-Control-Request-Headers",
                "authorization, content-type");
        assertThat(preflight.statusCode()).isEqualTo(204);
        assertThat(preflight.headers().firstValue("Access-Control-Allow-Origin"))
                .contains(APP);
        assertThat(preflight.headers().firstValue("Access-Control-Allow-Credentials"))
                .contains("true");
        assertThat(preflight
                        .headers()
                        .firstValue("Access-Control-Allow-Headers")
                        .orElse(""))
                .contains("Authorization");
        HttpResponse<String> call = send("POST", "/mcp", INIT, "Origin", APP, "Authorization", "Bearer " + KEY);
        assertThat(call.headers().firstValue("Access-Control-Allow-Origin")).contains(APP);
        assertThat(call.headers().firstValue("Access-Control-Expose-Headers").orElse(""))
                .contains("Mcp-Session-Id");
        HttpResponse<String> local = send("POST", "/mcp", INIT, "Authorization", "Bearer " + KEY);
        assertThat(local.headers().firstValue("Access-Control-Allow-Origin")).isEmpty();
        assertThat(send(
                                "OPTIONS",
                                "/mcp",
                                null,
                                "Origin",
                                "https://other.example.com",
                                "Access-Control-Request-Method",
                                "POST")
                        .headers()
                        .firstValue("Access-Control-Allow-Origin"))
                .isEmpty();
    }

    @Test
    void theAccessLogHasOneJsonLinePerRequestAndNoSecrets() throws Exception {
        send("GET", "/healthz", null);
        send("GET", "/sse?token=" + KEY + "-not", null);
        Thread.sleep(300);
        List<String> lines = server.log()
                .lines()
                .filter(l -> l.startsWith("{\"event\":\"http_request\""))
                .toList();
        assertThat(lines)
                .anySatisfy(l -> assertThat(l)
                        .contains(
                                "\"method\":\"GET\"",
                                "\"path\":\"/healthz\"",
                                "\"status\":200",
                                "\"bytes\":12",
                                "\"ms\":"));
        assertThat(lines).anySatisfy(l -> assertThat(l).contains("\"path\":\"/sse\"", "\"status\":401"));
        for (String line : lines) {
            assertThat(McpDriver.MAPPER.readTree(line).path("event").asText()).isEqualTo("http_request");
        }
        assertThat(server.log()).doesNotContain(KEY);
    }

    @Test
    void thePortFileNamesThePortWithMode0600() throws Exception {
        Path file = dir.resolve("port");
        assertThat(Files.readString(file).strip()).isEqualTo(String.valueOf(port()));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
                .isEqualTo("rw-------");
    }

    @Test
    void shutdownFinishesCallsUnderWayAndRemovesThePortFile(@TempDir Path own) throws Exception {
        Path portFile = own.resolve("run/rlm.port");
        ServerProcess stopping = ServerProcess.http("--port-file", portFile.toString());
        try (HttpClient client = HttpClient.newHttpClient()) {
            assertThat(portFile).exists();
            CompletableFuture<HttpResponse<String>> slow = client.sendAsync(
                    HttpRequest.newBuilder(URI.create(stopping.baseUrl() + "/rpc"))
                            .POST(
                                    HttpRequest.BodyPublishers.ofString(
                                            "{\"method\":\"rlm_execute\",\"params\":{\"code\":\"import time; time.sleep(1.5); print('finished')\"}}"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            Thread.sleep(700);
            int exit = stopping.terminate();
            HttpResponse<String> answer = slow.get(10, TimeUnit.SECONDS);
            assertThat(answer.statusCode()).isEqualTo(200);
            assertThat(answer.body()).contains("finished");
            assertThat(portFile).doesNotExist();
            assertThat(exit).isIn(0, 143);
        } finally {
            stopping.close();
        }
    }

    @Test
    void aNonLoopbackAddressWithoutAKeyIsRefusedAtStartUp() throws Exception {
        ProcessBuilder builder = new ProcessBuilder(
                        ServerProcess.command(List.of("serve", "--host", "0.0.0.0", "--port", "0")))
                .redirectErrorStream(true);
        builder.environment().remove("RLM_API_KEY");
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).isNotZero();
        assertThat(output).contains("RLM_API_KEY", "--allow-no-auth").doesNotContain("listening on");
    }
}

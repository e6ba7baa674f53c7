package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.ClosedAfterEach;
import dev.rlmmcp.e2e.support.Journey;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.UserLaunch;
import dev.rlmmcp.e2e.support.UserServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * After a 100 MiB inline rlm_load_data over HTTP, through {@code bin/rlm-mcp} with its defaults, the server
 * gives the heap the request made it commit back to the machine: its RSS comes back to within 100 MiB of
 * what it was before the load, where G1 alone would keep several hundred MiB committed.
 */
class HeapReturnIT {

    private static final long MIB = 1L << 20;

    @TempDir
    Path tmp;

    private UserServer server;

    @RegisterExtension
    final ClosedAfterEach open = new ClosedAfterEach();

    @Test
    void theHeapALargeInlineLoadTookIsGivenBack() throws Exception {
        Journey.mode(tmp, "rwxr-xr-x");
        Path home = Journey.dirs(tmp, "home");
        server = open.add(UserServer.start(
                UserLaunch.here(
                        tmp,
                        Map.of(
                                "HOME",
                                home.toString(),
                                "XDG_DATA_HOME",
                                home.resolve(".local/share").toString())),
                "--max-memory-mb",
                "2048",
                "--max-request-mb",
                "256"));
        HttpClient http = HttpClient.newHttpClient();
        String session = initialize(http);
        call(
                http,
                session,
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"rlm_execute\","
                        + "\"arguments\":{\"code\":\"x = 1\"}}}");
        Thread.sleep(1000);
        long before = rss(server.pid());

        String line = "0123456789 line of a log that goes on for a while\\n";
        String data = line.repeat((int) (100 * MIB / (line.length() - 1)));
        JsonNode loaded = call(
                http,
                session,
                "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
                        + "\"name\":\"rlm_load_data\",\"arguments\":{\"name\":\"big\",\"data\":\"" + data + "\"}}}");
        assertThat(loaded.path("result").path("isError").asBoolean())
                .as(loaded.toString())
                .isFalse();
        long atAnswer = rss(server.pid());

        long deadline = System.nanoTime() + 10_000_000_000L;
        long now = atAnswer;
        while (System.nanoTime() < deadline && now - before > 100 * MIB) {
            Thread.sleep(250);
            now = rss(server.pid());
        }
        assertThat((now - before) / MIB)
                .as("RSS growth, MiB (%d MiB at the answer)", (atAnswer - before) / MIB)
                .isLessThanOrEqualTo(100);
    }

    private String initialize(HttpClient http) throws Exception {
        HttpResponse<String> init = http.send(
                post(
                        null,
                        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                                + "\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\","
                                + "\"version\":\"1\"}}}"),
                HttpResponse.BodyHandlers.ofString());
        String session = init.headers().firstValue("Mcp-Session-Id").orElseThrow();
        http.send(
                post(session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"),
                HttpResponse.BodyHandlers.discarding());
        return session;
    }

    private JsonNode call(HttpClient http, String session, String body) throws Exception {
        HttpResponse<String> reply = http.send(post(session, body), HttpResponse.BodyHandlers.ofString());
        assertThat(reply.statusCode()).as(reply.body()).isEqualTo(200);
        return McpDriver.MAPPER.readTree(reply.body());
    }

    private HttpRequest post(String session, String body) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.mcpUrl()))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null) {
            request.header("Mcp-Session-Id", session).header("MCP-Protocol-Version", "2025-06-18");
        }
        return request.build();
    }

    private static long rss(long pid) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("\\D", "")) * 1024;
            }
        }
        throw new AssertionError("no VmRSS for " + pid);
    }
}

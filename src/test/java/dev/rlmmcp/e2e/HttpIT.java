package dev.rlmmcp.e2e;

import static dev.rlmmcp.e2e.support.McpDriver.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.RunningServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The REPL tools over Streamable HTTP, plus what only HTTP has: /health and several connections. */
class HttpIT extends ReplToolsContract {

    @TempDir
    static Path dataRoot;

    @RegisterExtension
    static final RunningServer server = RunningServer.http(() -> withServerFlags("--data-root", dataRoot.toString()))
            .connect(s -> McpDriver.http(s.mcpUrl()));

    @Override
    McpDriver client() {
        return server.client();
    }

    @Override
    Path dataRoot() {
        return dataRoot;
    }

    @Test
    void healthReportsStatusSessionsAndSandbox() throws Exception {
        ok("rlm_execute", Map.of("code", "warm = True"));
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> response = http.send(
                    HttpRequest.newBuilder(URI.create(server.baseUrl() + "/health"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("content-type").orElse("")).startsWith("application/json");
            JsonNode health = McpDriver.MAPPER.readTree(response.body());
            assertThat(health.path("status").asText()).isEqualTo("ok");
            assertThat(health.path("sandbox").asText()).isIn("bwrap", "process");
            assertThat(health.path("cgroup").asText()).isIn("v1", "v2", "none");
            assertThat(health.path("cgroup_limits").isBoolean()).isTrue();
            assertThat(health.path("sessions").asInt()).isPositive();
            assertThat(health.path("version").asText()).isNotBlank();
            assertThat(health.path("memory").path("jvm_heap_used_bytes").asLong())
                    .isPositive();
        }
    }

    @Test
    void endingAnMcpSessionReleasesItsDefaultSessionUnlessItHoldsVariables() {
        String empty;
        String holding;
        try (McpDriver other = McpDriver.http(server.mcpUrl())) {
            empty = json(other.call("rlm_execute", Map.of("code", "print(1)")))
                    .path("session_id")
                    .asText();
        }
        try (McpDriver other = McpDriver.http(server.mcpUrl())) {
            holding = json(other.call("rlm_execute", Map.of("code", "x = 1")))
                    .path("session_id")
                    .asText();
        }
        refused("rlm_execute", Map.of("code", "1", "session_id", empty), "SESSION_NOT_FOUND", "session_id");
        assertThat(ok("rlm_execute", Map.of("code", "print(x + 1)", "session_id", holding))
                        .path("stdout")
                        .asText())
                .isEqualTo("2\n");
    }

    @Test
    void eachConnectionHasItsOwnDefaultSessionAndCanReachAnotherById() {
        String mine = ok("rlm_execute", Map.of("code", "owner = 'first'"))
                .path("session_id")
                .asText();
        try (McpDriver other = McpDriver.http(server.mcpUrl())) {
            JsonNode theirs = json(other.call("rlm_execute", Map.of("code", "print('owner' in globals())")));
            assertThat(theirs.path("stdout").asText()).isEqualTo("False\n");
            assertThat(theirs.path("session_id").asText()).isNotEqualTo(mine);
            JsonNode shared = json(other.call("rlm_execute", Map.of("code", "print(owner)", "session_id", mine)));
            assertThat(shared.path("stdout").asText()).isEqualTo("first\n");
        }
    }
}

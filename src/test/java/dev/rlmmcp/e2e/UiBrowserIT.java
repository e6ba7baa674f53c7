package dev.rlmmcp.e2e;

import static dev.rlmmcp.e2e.support.McpDriver.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.BrowserCheck;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The trace viewer in a real browser: an agent-like script works through MCP (two connections),
 * then headless Chromium, driven by Playwright ({@code e2e/ui-check.mjs}), logs in with the API key,
 * finds the sessions, opens one, sees its steps and one more arrive live, checks the agent's markup
 * is shown as text, downloads the trace and saves screenshots under target/ui-screenshots.
 */
class UiBrowserIT {

    private static final String KEY = "ui-it-key-93b1";
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");

    @TempDir
    Path profile;

    @Test
    void aPersonWatchesAnAgentWorkInTheBrowser() throws Exception {
        assertThat(CHROMIUM)
                .as("Debian's chromium package (bin/test installs it as root)")
                .isExecutable();
        Path shots = McpDriver.projectRoot().resolve("target/ui-screenshots");
        Files.createDirectories(shots);
        Map<String, String> auth = Map.of("Authorization", "Bearer " + KEY);
        try (ServerProcess server = ServerProcess.http(Map.of("RLM_API_KEY", KEY));
                McpDriver agent = McpDriver.http(server.mcpUrl(), auth, null);
                McpDriver other = McpDriver.http(server.mcpUrl(), auth, null)) {
            String id = ok(
                            agent,
                            "rlm_init_context",
                            Map.of(
                                    "name",
                                    "sales",
                                    "data_type",
                                    "lines",
                                    "context_text",
                                    "north,120\nsouth,80\neast,200\nwest,45\n"))
                    .path("session_id")
                    .asText();
            List<String> steps = List.of(
                    "rows = [line.split(',') for line in sales]\ntotal = sum(int(n) for _, n in rows)\nprint(f'total: {total}')",
                    "print('<script>alert(1)</script>')",
                    "print('<img src=x onerror=\"window.__pwned = 1; alert(2)\">')",
                    "def share(region):\n    # fraction of the total\n    return int(dict(rows)[region]) / total\nshare('north')",
                    "blob = 'x' * 3_000_000\nfor i in range(40):\n    print('line', i)",
                    "del blob\nprint(len(rows))");
            for (String code : steps) {
                ok(agent, "rlm_run_repl", Map.of("session_id", id, "code", code));
            }
            JsonNode failed = json(agent.call("rlm_run_repl", Map.of("session_id", id, "code", "int('not a number')")));
            assertThat(failed.path("status").asText()).isEqualTo("error");
            ok(agent, "rlm_execute", Map.of("code", "scratch = 1"));
            String finalized = ok(other, "rlm_init_context", Map.of("name", "orders"))
                    .path("session_id")
                    .asText();
            ok(other, "rlm_run_repl", Map.of("session_id", finalized, "code", "answer = '42 orders'"));
            ok(other, "rlm_finalize", Map.of("session_id", finalized, "final_var_name", "answer"));

            String marker = "live-marker-" + System.nanoTime();
            int entries = 2 + steps.size();
            BrowserCheck.Outcome browser = BrowserCheck.run(
                    "ui-check.mjs",
                    List.of(
                            "--base",
                            server.baseUrl(),
                            "--key",
                            KEY,
                            "--session",
                            id,
                            "--finalized",
                            finalized,
                            "--entries",
                            String.valueOf(entries),
                            "--shots",
                            shots.toString(),
                            "--profile",
                            profile.resolve("chromium").toString(),
                            "--marker",
                            marker,
                            "--final-answer",
                            "42 orders"),
                    event -> {
                        if (!event.path("event").asText().equals("need-step")) {
                            return null;
                        }
                        ok(agent, "rlm_run_repl", Map.of("session_id", id, "code", "print('" + marker + "')"));
                        return "go";
                    });
            JsonNode last = browser.last();
            assertThat(last).as("ui-check.mjs result").isNotNull();
            assertThat(last.path("event").asText()).as(last.toString()).isEqualTo("done");
            assertThat(browser.exit()).isZero();
            assertThat(last.path("sessions_listed").asInt()).isGreaterThanOrEqualTo(3);
            assertThat(last.path("jsonl_lines").asInt()).isEqualTo(entries + 2);
            assertThat(last.path("logged_out").asBoolean()).isTrue();
            for (String shot : List.of("sessions.png", "session.png", "finalized.png")) {
                assertThat(Files.size(shots.resolve(shot))).as(shot).isGreaterThan(10_000);
            }
        }
    }

    @Test
    void withoutAKeyThePageOpensAndOffersNoLogOut() throws Exception {
        assertThat(CHROMIUM)
                .as("Debian's chromium package (bin/test installs it as root)")
                .isExecutable();
        Path shots = McpDriver.projectRoot().resolve("target/ui-screenshots");
        Files.createDirectories(shots);
        try (ServerProcess server = ServerProcess.http()) {
            Process browser = new ProcessBuilder(
                            McpDriver.findNode().toString(),
                            McpDriver.projectRoot().resolve("e2e/ui-check.mjs").toString(),
                            "--open",
                            "--base",
                            server.baseUrl(),
                            "--shots",
                            shots.toString(),
                            "--profile",
                            profile.resolve("chromium-open").toString())
                    .directory(McpDriver.projectRoot().toFile())
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .redirectInput(ProcessBuilder.Redirect.PIPE)
                    .start();
            browser.getOutputStream().close();
            String out = new String(browser.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (!browser.waitFor(60, TimeUnit.SECONDS)) {
                browser.descendants().forEach(ProcessHandle::destroyForcibly);
                browser.destroyForcibly();
            }
            JsonNode last = McpDriver.MAPPER.readTree(out.substring(out.lastIndexOf('\n') + 1));
            assertThat(last.path("event").asText()).as(out).isEqualTo("done");
            assertThat(last.path("logout_visible").asBoolean(true)).isFalse();
            assertThat(browser.exitValue()).isZero();
        }
    }

    private static JsonNode ok(McpDriver client, String tool, Map<String, ?> args) {
        JsonNode result = client.call(tool, args);
        assertThat(result.path("isError").asBoolean())
                .as("%s %s -> %s", tool, args, result)
                .isFalse();
        return json(result);
    }
}

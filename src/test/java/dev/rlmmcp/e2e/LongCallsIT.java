package dev.rlmmcp.e2e;

import static dev.rlmmcp.e2e.support.McpDriver.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.RunningServer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Long calls through the official TypeScript client: progress notifications, and the client's cancellation. */
class LongCallsIT {

    @TempDir
    static Path dataRoot;

    @RegisterExtension
    static final RunningServer http = RunningServer.http(LongCallsIT::flags).connect(s -> McpDriver.http(s.mcpUrl()));

    @RegisterExtension
    static final RunningServer stdio = RunningServer.stdio(LongCallsIT::flags);

    private static List<String> flags() {
        return List.of("--data-root", dataRoot.toString(), "--interrupt-grace-ms", "500");
    }

    private static McpDriver client(String transport) {
        return (transport.equals("http") ? http : stdio).client();
    }

    @ParameterizedTest
    @ValueSource(strings = {"stdio", "http"})
    void aLongCallSendsProgressWhileItRuns(String transport) {
        McpDriver client = client(transport);
        JsonNode line =
                client.callRaw("rlm_execute", Map.of("code", "import time\ntime.sleep(7)\nprint('slept')"), true);
        assertThat(line.path("ok").asBoolean()).as("%s", line).isTrue();
        assertThat(json(line.path("result")).path("stdout").asText()).isEqualTo("slept\n");
        List<JsonNode> progress = client.events().stream()
                .filter(e -> e.path("event").asText().equals("progress")
                        && e.path("id").equals(line.path("id")))
                .toList();
        assertThat(progress).hasSizeGreaterThanOrEqualTo(2);
        assertThat(progress.getFirst().path("message").asText()).matches("running \\d+ s");
    }

    @ParameterizedTest
    @ValueSource(strings = {"stdio", "http"})
    void aCallTheClientGivesUpOnIsInterruptedWithTheVariablesKept(String transport) {
        McpDriver client = client(transport);
        client.call("rlm_execute", Map.of("code", "kept = 42"));
        ObjectNode spin = McpDriver.callCommand(
                        "rlm_execute", Map.of("code", "while True: pass", "timeout_s", 120), false)
                .put("timeoutMs", 1500);
        JsonNode abandoned = client.request(spin);
        assertThat(abandoned.path("ok").asBoolean()).as("the client's timeout").isFalse();

        long started = System.nanoTime();
        JsonNode next = json(client.call("rlm_execute", Map.of("code", "kept")));
        assertThat((System.nanoTime() - started) / 1_000_000)
                .as("ms until the next call ran")
                .isLessThan(5_000);
        assertThat(next.path("stdout").asText()).isEqualTo("42\n");
        assertThat(client.stderr())
                .as("the cancelled call's answer is not sent")
                .doesNotContain("unknown message ID");
    }
}

package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.RunningServer;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The REPL tools over stdio, the server spawned by the official TypeScript client. */
class StdioIT extends ReplToolsContract {

    @TempDir
    static Path dataRoot;

    @RegisterExtension
    static final RunningServer server = RunningServer.stdio(() -> withServerFlags("--data-root", dataRoot.toString()));

    @Test
    void loadsInlineDataLargerThanJacksonsDefaultStringLimit() {
        String data = "line with some log text and an ERROR maybe\n".repeat(600_000);
        JsonNode loaded = ok("rlm_load_data", Map.of("name", "big", "data", data, "data_type", "lines"));
        assertThat(loaded.path("length").asInt()).isEqualTo(600_000);
        assertThat(exec("print(sum('ERROR' in l for l in big))").path("stdout").asText())
                .isEqualTo("600000\n");
        ok("rlm_clear", Map.of("name", "big"));
    }

    @Override
    McpDriver client() {
        return server.client();
    }

    @Override
    Path dataRoot() {
        return dataRoot;
    }
}

package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.Map;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The REPL tools over stdio, the server spawned by the official TypeScript client. */
class StdioIT extends ReplToolsContract {

    @TempDir
    static Path dataRoot;

    private static McpDriver client;

    @BeforeAll
    static void connect() {
        List<String> args = new ArrayList<>(List.of("stdio", "--data-root", dataRoot.toString()));
        args.addAll(SERVER_FLAGS);
        client = McpDriver.stdio(ServerProcess.command(args));
    }

    @AfterAll
    static void disconnect() {
        client.close();
    }

    @Test
    void loadsInlineDataLargerThanJacksonsDefaultStringLimit() {
        String data = "line with some log text and an ERROR maybe\n".repeat(600_000);
        JsonNode loaded = ok("rlm_load_data", Map.of("name", "big", "data", data, "data_type", "lines"));
        assertThat(loaded.path("length").asInt()).isEqualTo(600_000);
        assertThat(exec("print(sum('ERROR' in l for l in big))").path("stdout").asText()).isEqualTo("600000\n");
        ok("rlm_clear", Map.of("name", "big"));
    }

    @Override
    McpDriver client() {
        return client;
    }

    @Override
    Path dataRoot() {
        return dataRoot;
    }
}

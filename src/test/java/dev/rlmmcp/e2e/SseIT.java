package dev.rlmmcp.e2e;

import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/** The REPL tools over the legacy HTTP+SSE transport, with an API key the client sends as a bearer header. */
class SseIT extends ReplToolsContract {

    private static final String KEY = "sse-it-key-2b7d";

    @TempDir
    static Path dataRoot;

    private static ServerProcess server;
    private static McpDriver client;

    @BeforeAll
    static void start() throws Exception {
        List<String> args = new ArrayList<>(List.of("--data-root", dataRoot.toString()));
        args.addAll(SERVER_FLAGS);
        server = ServerProcess.http(Map.of("RLM_API_KEY", KEY), args.toArray(String[]::new));
        client = McpDriver.sse(server.baseUrl() + "/sse", Map.of("Authorization", "Bearer " + KEY), null);
    }

    @AfterAll
    static void stop() {
        client.close();
        server.close();
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

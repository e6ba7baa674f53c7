package dev.rlmmcp.e2e;

import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.RunningServer;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The REPL tools over the legacy HTTP+SSE transport, with an API key the client sends as a bearer header. */
class SseIT extends ReplToolsContract {

    private static final String KEY = "sse-it-key-2b7d";

    @TempDir
    static Path dataRoot;

    @RegisterExtension
    static final RunningServer server = RunningServer.http(
                    Map.of("RLM_API_KEY", KEY), () -> withServerFlags("--data-root", dataRoot.toString()))
            .connect(s -> McpDriver.sse(s.baseUrl() + "/sse", Map.of("Authorization", "Bearer " + KEY), null));

    @Override
    McpDriver client() {
        return server.client();
    }

    @Override
    Path dataRoot() {
        return dataRoot;
    }
}

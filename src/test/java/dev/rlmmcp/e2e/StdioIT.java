package dev.rlmmcp.e2e;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
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

    @Override
    McpDriver client() {
        return client;
    }

    @Override
    Path dataRoot() {
        return dataRoot;
    }
}

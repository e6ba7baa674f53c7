package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The official MCP conformance suite ({@code @modelcontextprotocol/conformance}, pinned in
 * e2e/package.json), every scenario of its active server suite, against {@code serve} run by
 * {@link ConformanceServer}: the production HTTP stack with the suite's fixture tools added.
 */
class ConformanceIT {

    @TempDir
    Path results;

    @Test
    void theActiveServerSuitePasses() throws Exception {
        try (ServerProcess server = ServerProcess.httpWithFixtures()) {
            NodeTool.Result run = NodeTool.conformance(server.mcpUrl(), results);
            assertThat(run.exit()).as(run.both()).isZero();
            assertThat(run.stdout()).as(run.both()).contains("Running active suite").containsPattern("Total: \\d+ passed, 0 failed");
            assertThat(run.stdout()).contains("dns-rebinding-protection", "tools-call-sampling", "server-sse-multiple-streams");
        }
    }

    @Test
    void theRevision20260728RequirementsPassBeyondThePendingList() throws Exception {
        try (ServerProcess server = ServerProcess.httpWithFixtures()) {
            NodeTool.Result run = NodeTool.conformance2026(server.mcpUrl(), results);
            assertThat(run.exit()).as(run.both()).isZero();
            assertThat(run.stdout()).as(run.both())
                    .containsPattern("✓ caching: \\d+ passed")
                    .containsPattern("✓ http-header-validation: \\d+ passed")
                    .containsPattern("✓ json-schema-2020-12: \\d+ passed")
                    .containsPattern("✓ tools-call-with-progress: \\d+ passed");
        }
    }
}

package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rlmmcp.e2e.support.ConformanceServer;
import dev.rlmmcp.e2e.support.NodeTool;
import dev.rlmmcp.e2e.support.ServerProcess;
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
            assertThat(run.stdout())
                    .as(run.both())
                    .contains("Running active suite")
                    .containsPattern("Total: \\d+ passed, 0 failed");
            assertThat(run.stdout())
                    .contains("dns-rebinding-protection", "tools-call-sampling", "server-sse-multiple-streams");
        }
    }

    @Test
    void everyRequirementOfRevision20251125Passes() throws Exception {
        try (ServerProcess server = ServerProcess.httpWithFixtures()) {
            NodeTool.Result run = NodeTool.conformanceRequirements(server.mcpUrl(), "2025-11-25", results);
            assertThat(run.exit()).as(run.both()).isZero();
            assertThat(run.stdout())
                    .as(run.both())
                    .containsPattern("Total: \\d+ passed, 0 failed")
                    .containsPattern("✓ tools-call-sampling: \\d+ passed")
                    .containsPattern("✓ server-session-lifecycle: \\d+ passed");
        }
    }

    @Test
    void everyRequirementOfRevision20260728AndTheTasksExtensionPasses() throws Exception {
        try (ServerProcess server = ServerProcess.httpWithFixtures()) {
            NodeTool.Result run = NodeTool.conformanceRequirements(server.mcpUrl(), "2026-07-28", results);
            assertThat(run.exit()).as(run.both()).isZero();
            assertThat(run.stdout())
                    .as(run.both())
                    .containsPattern("Total: \\d+ passed, 0 failed")
                    .containsPattern("✓ server-stateless: \\d+ passed")
                    .containsPattern("✓ input-required-result-multi-round: \\d+ passed")
                    .containsPattern("✓ input-required-result-tampered-state: \\d+ passed")
                    .containsPattern("✓ tasks-lifecycle: \\d+ passed")
                    .containsPattern("✓ tasks-mrtr-composition: \\d+ passed")
                    .containsPattern("✓ http-custom-header-server-validation: \\d+ passed")
                    .doesNotContain("✗");
        }
    }
}

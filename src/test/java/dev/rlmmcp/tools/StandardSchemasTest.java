package dev.rlmmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.bridge.BridgedServers;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.TestSettings;
import dev.rlmmcp.data.DataRoot;
import dev.rlmmcp.data.DataSources;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.tools.standard.StandardTools;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The server trusts its tool schemas at start-up (no validator on that path), so they are checked here. */
class StandardSchemasTest {

    @TempDir
    Path dir;

    @Test
    void everyToolSchemaIsAValidJsonSchema() {
        JsonSchemaValidator validator = McpJsonDefaults.getSchemaValidator();
        try (Sessions sessions =
                new Sessions(new KernelFactory(TestSettings.in(dir), new ProcessLauncher(), new ObjectMapper()))) {
            ToolCatalog catalog =
                    StandardTools.catalog(sessions, new DataRoot(dir), BridgedServers.NONE, DataSources.defaults());
            assertThat(catalog.specifications()).hasSize(23).allSatisfy(spec -> {
                assertThat(validator.validateSchema(spec.tool().inputSchema()).valid())
                        .as(spec.tool().name() + " input schema")
                        .isTrue();
                assertThat(spec.tool().outputSchema())
                        .as(spec.tool().name() + " declares no output schema")
                        .isNull();
            });
        }
    }
}

package dev.rlmmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
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
import java.util.ArrayList;
import java.util.List;
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
            assertThat(catalog.specifications()).hasSize(19).allSatisfy(spec -> {
                assertThat(validator.validateSchema(spec.tool().inputSchema()).valid())
                        .as(spec.tool().name() + " input schema")
                        .isTrue();
                assertThat(spec.tool().outputSchema())
                        .as(spec.tool().name() + " declares no output schema")
                        .isNull();
            });
        }
    }

    @Test
    void everyIntegerBoundIsOneAJavaScriptNumberHoldsExactly() {
        ObjectMapper json = new ObjectMapper();
        try (Sessions sessions = new Sessions(new KernelFactory(TestSettings.in(dir), new ProcessLauncher(), json))) {
            ToolCatalog catalog =
                    StandardTools.catalog(sessions, new DataRoot(dir), BridgedServers.NONE, DataSources.defaults());
            List<Long> bounds = new ArrayList<>();
            catalog.specifications().forEach(spec -> {
                JsonNode schema = json.valueToTree(spec.tool().inputSchema());
                for (JsonNode property : schema.findParents("type")) {
                    for (String bound : List.of("minimum", "maximum")) {
                        if (property.has(bound)) {
                            bounds.add(Math.abs(property.path(bound).asLong()));
                            assertThat(property.path(bound).isIntegralNumber()
                                            || property.path(bound).isDouble())
                                    .isTrue();
                        }
                    }
                }
            });
            assertThat(bounds).isNotEmpty().allSatisfy(b -> assertThat(b).isLessThanOrEqualTo((1L << 53) - 1));
            assertThat(bounds).contains(Schema.MAX_INTEGER);
        }
        assertThatThrownBy(() -> Schema.object().integer("n", "a count", 0, Long.MAX_VALUE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("2^53");
    }
}

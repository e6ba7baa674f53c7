package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bytes a model reads, through the official TypeScript client: the scripted task set of
 * bench/context_tasks.py on our server against the seed-000 server's replies to the same calls
 * (recorded in bench/fixtures/seed000-replies.json). Every answer must be in our text, every error
 * must say what it is, and the totals must stay under the goal.
 */
class ContextBudgetIT {

    /** tools/list of this server before text replies (with an outputSchema on every tool). */
    static final int TOOLS_LIST_BYTES_BEFORE = 23_610;

    @TempDir
    Path dir;

    @Test
    void theTaskSetReadsInHalfTheSeedsBytesWithEveryAnswer() throws Exception {
        Path root = McpDriver.projectRoot();
        Process write = new ProcessBuilder(
                        "python3", root.resolve("bench/context_tasks.py").toString(), "--write", dir.toString())
                .inheritIO()
                .start();
        assertThat(write.waitFor(120, TimeUnit.SECONDS) && write.exitValue() == 0)
                .as("context_tasks.py")
                .isTrue();
        JsonNode tasks = McpDriver.MAPPER.readTree(dir.resolve("tasks.json").toFile());
        JsonNode seed = McpDriver.MAPPER
                .readTree(root.resolve("bench/fixtures/seed000-replies.json").toFile())
                .path("replies");
        assertThat(seed.size()).isEqualTo(tasks.size());

        long seedText = 0;
        long ourText = 0;
        long ourStructured = 0;
        StringBuilder table = new StringBuilder();
        try (McpDriver client =
                McpDriver.stdio(ServerProcess.command(List.of("stdio", "--data-root", dir.toString())))) {
            for (int i = 0; i < tasks.size(); i++) {
                JsonNode task = tasks.get(i);
                @SuppressWarnings("unchecked")
                Map<String, Object> arguments = McpDriver.MAPPER.convertValue(task.path("arguments"), Map.class);
                JsonNode result = client.callAsIs(task.path("tool").asText(), arguments);
                String text = McpDriver.text(result);
                for (JsonNode expected : task.path("expect")) {
                    assertThat(text)
                            .as("%s: the answer %s", task.path("label").asText(), expected)
                            .contains(expected.asText());
                }
                if (result.path("isError").asBoolean()) {
                    assertThat(text)
                            .as("an error says what it is")
                            .containsPattern("(?m)^\\w+(Error|Exception)\\b|^ERROR ");
                }
                int textBytes = text.getBytes(StandardCharsets.UTF_8).length;
                int structuredBytes = result.has("structuredContent")
                        ? McpDriver.MAPPER.writeValueAsBytes(result.get("structuredContent")).length
                        : 0;
                seedText += seed.get(i).path("text_bytes").asLong();
                ourText += textBytes;
                ourStructured += structuredBytes;
                table.append("%-16s seed %5d  ours %5d + %d%n"
                        .formatted(
                                task.path("label").asText(),
                                seed.get(i).path("text_bytes").asLong(),
                                textBytes,
                                structuredBytes));
            }
            int toolsList = McpDriver.MAPPER.writeValueAsBytes(
                            client.request(McpDriver.MAPPER.createObjectNode().put("op", "list_tools"))
                                    .path("result"))
                    .length;
            table.append("tools/list %d B (before: %d B)%n".formatted(toolsList, TOOLS_LIST_BYTES_BEFORE));
            System.out.print(table);
            assertThat(toolsList).as("tools/list bytes").isLessThan(TOOLS_LIST_BYTES_BEFORE);
        }
        assertThat(ourText)
                .as("text bytes, ours against the seed's %d%n%s", seedText, table)
                .isLessThanOrEqualTo(seedText / 2);
        assertThat(ourText + ourStructured)
                .as("text + structuredContent bytes%n%s", table)
                .isLessThanOrEqualTo(seedText * 3 / 4);
    }

    @Test
    void theSeedAnsweredEveryCallOfTheFixture() throws Exception {
        JsonNode seed = McpDriver.MAPPER
                .readTree(McpDriver.projectRoot()
                        .resolve("bench/fixtures/seed000-replies.json")
                        .toFile())
                .path("replies");
        for (JsonNode reply : seed) {
            assertThat(reply.path("missing"))
                    .as("the seed answered %s", reply.path("label").asText())
                    .isEmpty();
        }
    }
}

package dev.rlmmcp.tools.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.Limits;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.TestReplies;
import dev.rlmmcp.core.TestSettings;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ListSessionsToolTest {

    @TempDir
    Path dir;

    private Sessions sessions;
    private ListSessionsTool tool;
    private final List<String> made = new ArrayList<>();

    @BeforeEach
    void start() throws InterruptedException {
        sessions = new Sessions(new KernelFactory(TestSettings.in(dir), new ProcessLauncher(), new ObjectMapper()));
        tool = new ListSessionsTool(sessions);
        for (int i = 0; i < 40; i++) {
            made.add(sessions.create("context", new Limits(100, null, null, null))
                    .id());
            Thread.sleep(1);
        }
    }

    @AfterEach
    void stop() {
        sessions.close();
    }

    private ObjectNode list(Map<String, Object> args) {
        return tool.call(new Args(tool.name(), args, tool.schema().names()), new Caller("c"));
    }

    private static int bytes(JsonNode reply) {
        return reply.toString().getBytes(StandardCharsets.UTF_8).length;
    }

    @Test
    void byDefaultTwentyCompactEntriesMostRecentFirstWithAHintForTheNextPage() {
        ObjectNode page = list(Map.of());
        assertThat(page.path("count").asInt()).isEqualTo(20);
        assertThat(page.path("total").asInt()).isEqualTo(40);
        assertThat(page.path("next_offset").asInt()).isEqualTo(20);
        assertThat(page.path("next").asText()).contains("offset 20");
        assertThat(page.path("sessions").path(0).path("session_id").asText()).isEqualTo(made.get(39));
        JsonNode entry = page.path("sessions").path(0);
        assertThat(entry.fieldNames())
                .toIterable()
                .containsExactly("session_id", "name", "state", "steps", "memory", "last_active");
        assertThat(bytes(page)).isLessThan(4096);
        assertThat(bytes(list(Map.of("limit", 40)))).isLessThanOrEqualTo(8192);
    }

    @Test
    void pagesCoverEverySessionOnceAndTheLastHasNoNext() {
        List<String> seen = new ArrayList<>();
        ObjectNode page = list(Map.of("limit", 15));
        page.path("sessions").forEach(s -> seen.add(s.path("session_id").asText()));
        while (page.has("next_offset")) {
            page = list(Map.of("limit", 15, "offset", page.path("next_offset").asInt()));
            page.path("sessions").forEach(s -> seen.add(s.path("session_id").asText()));
        }
        assertThat(seen).containsExactlyElementsOf(made.reversed());
        assertThat(list(Map.of("offset", 100)).path("count").asInt()).isZero();
    }

    @Test
    void theStateFilterAndVerboseEntries() {
        sessions.get(made.get(3)).finish("done", null);
        ObjectNode finalized = list(Map.of("state", "finalized"));
        assertThat(finalized.path("total").asInt()).isEqualTo(1);
        assertThat(finalized.path("sessions").path(0).path("session_id").asText())
                .isEqualTo(made.get(3));
        assertThat(list(Map.of("state", "active")).path("total").asInt()).isEqualTo(39);
        ObjectNode verbose = list(Map.of("verbose", true, "limit", 1));
        assertThat(verbose.path("sessions").path(0))
                .isEqualTo(TestReplies.summary(sessions.get(made.get(3)).summary()));
        assertThat(verbose.path("sessions")
                        .path(0)
                        .path("limits")
                        .path("max_steps")
                        .asInt())
                .isEqualTo(100);
        assertThatThrownBy(() -> list(Map.of("state", "gone"))).isInstanceOf(RlmException.class);
    }
}

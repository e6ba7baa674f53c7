package dev.rlmmcp.tools.session;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.Limits;
import dev.rlmmcp.core.Ownership;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.TestSettings;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.llm.LlmService;
import dev.rlmmcp.store.StateStore;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** rlm_sessions in a cluster: sessions other nodes own are listed with their owner node, from their records. */
class ClusterListingTest {

    @TempDir
    Path dir;

    private final List<Sessions> opened = new ArrayList<>();

    @AfterEach
    void stop() {
        opened.forEach(Sessions::close);
    }

    private Sessions node(String name, Ownership ownership) {
        StateStore store = StateStore.open(dir.resolve(name), Duration.ofHours(1));
        KernelFactory kernels = new KernelFactory(TestSettings.in(dir), new ProcessLauncher(), new ObjectMapper());
        Sessions sessions = new Sessions(
                kernels,
                LlmService.samplingOnly(kernels.json()),
                CompletableFuture.completedFuture(store),
                Limits.NONE,
                ownership);
        opened.add(sessions);
        return sessions;
    }

    /** Everything claimed here is held; the cluster also has {@code elsewhere} (null: its database is down). */
    private static Ownership cluster(List<Ownership.Elsewhere> elsewhere) {
        return new Ownership() {
            @Override
            public void claim(String sessionId) {}

            @Override
            public boolean acquire(String sessionId) {
                return true;
            }

            @Override
            public boolean holds(String sessionId) {
                return true;
            }

            @Override
            public void release(String sessionId) {}

            @Override
            public Optional<String> liveOwnerElsewhere(String sessionId) {
                return Optional.empty();
            }

            @Override
            public List<Elsewhere> elsewhere() {
                if (elsewhere == null) {
                    throw new RlmException(
                            ErrorCode.UPSTREAM_ERROR, "the cluster database did not answer", null, "retry");
                }
                return elsewhere;
            }
        };
    }

    @Test
    void sessionsOwnedElsewhereAreListedWithTheirOwnerNode() throws Exception {
        Sessions a = node("a", Ownership.SINGLE_NODE);
        Session theirs = a.create("theirs", Limits.NONE);
        Session gone = a.create("orphan", Limits.NONE);
        a.close();
        StateStore aStore = StateStore.open(dir.resolve("a"), Duration.ofHours(1));
        String theirsRecord =
                aStore.database().find(theirs.id(), 1).orElseThrow().record();
        String goneRecord = aStore.database().find(gone.id(), 1).orElseThrow().record();
        aStore.close();

        Sessions b = node(
                "b",
                cluster(List.of(
                        new Ownership.Elsewhere(theirs.id(), "node-a", true, theirsRecord),
                        new Ownership.Elsewhere(gone.id(), "node-c", false, goneRecord))));
        Session mine = b.create("mine", Limits.NONE);
        ListSessionsTool tool = new ListSessionsTool(b);
        ObjectNode reply =
                tool.call(new Args(tool.name(), Map.of(), tool.schema().names()), new Caller("c"));

        assertThat(reply.path("total").asInt()).isEqualTo(3);
        Map<String, JsonNode> byId = new java.util.HashMap<>();
        reply.path("sessions").forEach(s -> byId.put(s.path("session_id").asText(), s));
        assertThat(byId.get(mine.id()).has("owner_node")).isFalse();
        assertThat(byId.get(theirs.id()).path("owner_node").asText()).isEqualTo("node-a");
        assertThat(byId.get(theirs.id()).path("name").asText()).isEqualTo("theirs");
        assertThat(byId.get(theirs.id()).has("owner_gone")).isFalse();
        assertThat(byId.get(gone.id()).path("owner_gone").asBoolean()).isTrue();
        assertThat(reply.path("sessions").get(0).path("session_id").asText())
                .as("most recently active first")
                .isEqualTo(mine.id());
    }

    @Test
    void withTheClusterDatabaseDownThisNodesSessionsAreStillListed() {
        Sessions b = node("b", cluster(null));
        Session mine = b.create("mine", Limits.NONE);
        ListSessionsTool tool = new ListSessionsTool(b);
        ObjectNode reply =
                tool.call(new Args(tool.name(), Map.of(), tool.schema().names()), new Caller("c"));
        assertThat(reply.path("sessions").get(0).path("session_id").asText()).isEqualTo(mine.id());
        assertThat(reply.path("other_nodes_unlisted").asText()).contains("did not answer");
    }
}

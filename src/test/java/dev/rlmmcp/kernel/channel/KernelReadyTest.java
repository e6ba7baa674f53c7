package dev.rlmmcp.kernel.channel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.kernel.process.Harness;
import dev.rlmmcp.kernel.process.KernelSpec;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.kernel.protocol.Ready;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The ready frame: read into {@link Ready}, and a harness of another protocol refused at start. */
class KernelReadyTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

    @TempDir
    Path dir;

    @AfterEach
    void stop() {
        timer.shutdownNow();
    }

    private Kernel start(Path harness) throws Exception {
        KernelSpec spec = new KernelSpec(Path.of("/usr/bin/python3"), harness, List.of("{}"), dir, List.of(dir));
        return Kernel.start(new ProcessLauncher(), spec, JSON, timer, "ready-test", Duration.ofSeconds(30));
    }

    @Test
    void theHarnessNamesItsProtocolAndReservedNames() throws Exception {
        try (Kernel kernel = start(Harness.install(dir.resolve("runtime")))) {
            Ready ready = kernel.ready();
            assertThat(ready.protocol()).isEqualTo(Ready.PROTOCOL);
            assertThat(ready.pid()).isPositive();
            assertThat(ready.python()).matches("3\\.\\d+\\.\\d+.*");
            assertThat(ready.reserved())
                    .contains(
                            "llm_query",
                            "llm_query_batched",
                            "mcp",
                            "_last_output",
                            "rlm_query",
                            "rlm_query_batched",
                            "FINAL",
                            "FINAL_VAR",
                            "SHOW_VARS");
        }
    }

    @Test
    void aHarnessOfAnotherProtocolIsRefusedNamingBothVersions() throws Exception {
        Path fake = Files.createDirectories(dir.resolve("fake"));
        Files.writeString(fake.resolve("__main__.py"), """
                import json, os, struct, time
                body = json.dumps({"ready": True, "pid": os.getpid(), "python": "3.0", "protocol": 99}).encode()
                os.write(1, struct.pack(">IQ", len(body), 0) + body)
                time.sleep(30)
                """);

        assertThatThrownBy(() -> start(fake))
                .isInstanceOf(KernelDiedException.class)
                .hasMessageContaining("protocol 99")
                .hasMessageContaining("protocol " + Ready.PROTOCOL);
    }

    @Test
    void readyIsReadLeniently() {
        ObjectNode header = JSON.createObjectNode()
                .put("ready", true)
                .put("pid", 7)
                .put("python", "3.11.2")
                .put("protocol", 1);
        header.putArray("reserved").add("mcp").add(3).add("llm_query");
        assertThat(Ready.of(header)).isEqualTo(new Ready(7, "3.11.2", 1, Set.of("mcp", "llm_query")));
        Ready old = Ready.of(JSON.createObjectNode().put("ready", true));
        assertThat(old).isEqualTo(new Ready(-1, "", 0, Set.of()));
        assertThat(old.compatible()).isFalse();
        assertThat(old.mismatch())
                .isEqualTo("the kernel harness speaks protocol 0 (it named none), " + "this server speaks protocol "
                        + Ready.PROTOCOL);
    }
}

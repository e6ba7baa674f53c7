package dev.rlmmcp.core;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.kernel.channel.CallbackException;
import dev.rlmmcp.kernel.channel.KernelDiedException;
import dev.rlmmcp.kernel.protocol.Cleared;
import dev.rlmmcp.kernel.protocol.Evicted;
import dev.rlmmcp.kernel.protocol.ExecResult;
import dev.rlmmcp.kernel.protocol.Loaded;
import dev.rlmmcp.kernel.protocol.LoopAnswer;
import dev.rlmmcp.kernel.protocol.McpSetup;
import dev.rlmmcp.kernel.protocol.MemoryUse;
import dev.rlmmcp.kernel.protocol.Page;
import dev.rlmmcp.kernel.protocol.PyError;
import dev.rlmmcp.kernel.protocol.Truncation;
import dev.rlmmcp.kernel.protocol.Unspilled;
import dev.rlmmcp.kernel.protocol.VarEntry;
import dev.rlmmcp.kernel.protocol.VarList;
import dev.rlmmcp.tools.Replies;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Core's records carry what the kernel's protocol records carry: each, mapped, serialises to the same
 * JSON as the kernel's record it was made from, so that no reply changes because core maps them.
 */
class WireRecordsTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final MemoryUse MEMORY = new MemoryUse(10, "10 B", 2, 1, 100, 10.0, "100 B", 2048L, "2 KB");
    private static final List<Evicted> EVICTED =
            List.of(new Evicted("a", 5, "5 B", true, null), new Evicted("b", 6, "6 B", false, "unpicklable"));

    private static void same(Object kernels, Object cores) {
        ObjectNode expected = Replies.tree(kernels);
        assertThat(Replies.tree(cores)).isEqualTo(expected);
        assertThat(JSON.valueToTree(cores).toString())
                .isEqualTo(JSON.valueToTree(kernels).toString());
    }

    @Test
    void aStepsOutputIsTheKernelsExecResult() {
        ExecResult full = new ExecResult(
                "out",
                "err",
                new PyError("ValueError", "no", "tb", true, 3),
                List.of("x"),
                List.of("y"),
                1.5,
                EVICTED,
                MEMORY,
                Map.of("stdout", new Truncation(100, 10, "_stdout", 100)),
                Map.of("g", "a generator"),
                new Unspilled(List.of("z"), 7, 0.5),
                new LoopAnswer("42", true));
        same(full, WireRecords.output(full));
        assertThat(WireRecords.output(full).interrupted()).isTrue();
        ExecResult bare = new ExecResult(null, null, null, null, null, 0, null, null, null, null, null, null);
        same(bare, WireRecords.output(bare));
    }

    @Test
    void theOtherAnswersAreTheKernelsToo() {
        Page last = new Page("x", "str", "text", 3, 0, 3, null, "abc", null);
        same(last, WireRecords.page(last));
        assertThat(Replies.tree(WireRecords.page(last)).has("next_offset"))
                .as("null, and still there")
                .isTrue();
        VarEntry entry =
                new VarEntry("x", "memory", "str", 3L, "3 B", "t0", "t1", "t2", "'abc'", 3L, List.of("c"), null, "yes");
        same(
                new VarList(List.of(entry, VarEntry.named("y")), MEMORY),
                WireRecords.variables(new VarList(List.of(entry, VarEntry.named("y")), MEMORY)));
        same(entry, WireRecords.variable(entry));
        Cleared cleared = new Cleared(List.of("x"), 3, "3 B", MEMORY);
        same(cleared, WireRecords.cleared(cleared));
        Loaded loaded = new Loaded("x", "str", "text", 3, "3 B", "abc", 0.25, EVICTED, MEMORY, 3L, null);
        same(loaded, WireRecords.loaded(loaded));
        same(MEMORY, WireRecords.memory(MEMORY));
    }

    @Test
    void theBridgeSetupIsTheKernelsMcpSetup() {
        BridgeSetup setup = new BridgeSetup(
                List.of(new BridgeSetup.Server(
                        "calc",
                        "calc",
                        List.of(new BridgeSetup.Tool(
                                "add-two",
                                "add_two",
                                "adds",
                                JSON.createObjectNode().put("type", "object"))))),
                List.of("calc", "other"));
        McpSetup wire = WireRecords.mcp(setup);
        assertThat(JSON.valueToTree(wire).toString())
                .isEqualTo(new ObjectMapper()
                        .valueToTree(new McpSetup(
                                List.of(new McpSetup.Server(
                                        "calc",
                                        "calc",
                                        List.of(new McpSetup.Tool(
                                                "add-two",
                                                "add_two",
                                                "adds",
                                                JSON.createObjectNode().put("type", "object"))))),
                                List.of("calc", "other")))
                        .toString());
        assertThat(WireRecords.mcp(null)).isNull();
    }

    @Test
    void theSharedVocabularyNamesTheSameThings() {
        assertThat(Arrays.stream(DataType.values()).map(Enum::name))
                .containsExactly(Arrays.stream(dev.rlmmcp.kernel.protocol.DataType.values())
                        .map(Enum::name)
                        .toArray(String[]::new));
        for (DataType type : DataType.values()) {
            assertThat(WireRecords.dataType(type).wireName()).isEqualTo(type.wireName());
        }
        assertThat(DataType.choices()).isEqualTo(dev.rlmmcp.kernel.protocol.DataType.choices());
        for (KernelDiedException.Cause cause : KernelDiedException.Cause.values()) {
            assertThat(WireRecords.cause(cause).name()).isEqualTo(cause.name());
        }
        assertThat(KernelLoss.Cause.values()).hasSameSizeAs(KernelDiedException.Cause.values());
    }

    @Test
    void aRefusedCallbackReachesTheKernelWithItsCodeAndMessage() throws Exception {
        var kernels = WireRecords.callbacks(HostCallbacks.byKind(Map.of("echo", (kind, request) -> request)));
        var request = JSON.createObjectNode().put("x", 1);
        assertThat(kernels.handle("echo", request)).isEqualTo(request);
        try {
            kernels.handle("rlm", request);
            throw new AssertionError("not refused");
        } catch (CallbackException refused) {
            assertThat(refused.code()).isEqualTo("NOT_AVAILABLE");
            assertThat(refused.getMessage()).isEqualTo("no host callbacks of kind 'rlm' are available here");
        }
    }
}

package dev.rlmmcp.core;

import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.kernel.channel.CallbackException;
import dev.rlmmcp.kernel.channel.KernelCallbacks;
import dev.rlmmcp.kernel.protocol.Cleared;
import dev.rlmmcp.kernel.protocol.Evicted;
import dev.rlmmcp.kernel.protocol.ExecResult;
import dev.rlmmcp.kernel.protocol.Loaded;
import dev.rlmmcp.kernel.protocol.McpSetup;
import dev.rlmmcp.kernel.protocol.MemoryUse;
import dev.rlmmcp.kernel.protocol.Page;
import dev.rlmmcp.kernel.protocol.PyError;
import dev.rlmmcp.kernel.protocol.VarEntry;
import dev.rlmmcp.kernel.protocol.VarList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The kernel's protocol records turned into core's, and core's requests into the kernel's: the one
 * place a change to a harness reply field reaches, so that it stops at core.
 */
final class WireRecords {

    private WireRecords() {}

    static StepOutput output(ExecResult e) {
        if (e == null) {
            return null;
        }
        Map<String, StepOutput.Truncated> truncated = null;
        if (e.truncated() != null) {
            truncated = new LinkedHashMap<>();
            for (var cut : e.truncated().entrySet()) {
                var t = cut.getValue();
                truncated.put(
                        cut.getKey(),
                        t == null
                                ? null
                                : new StepOutput.Truncated(t.totalChars(), t.shownChars(), t.keptIn(), t.keptChars()));
            }
        }
        var loaded = e.loadedFromSnapshot();
        var answer = e.answer();
        return new StepOutput(
                e.stdout(),
                e.stderr(),
                error(e.error()),
                e.variablesChanged(),
                e.variablesDeleted(),
                e.durationMs(),
                evicted(e.evicted()),
                memory(e.memory()),
                truncated,
                e.notPersisted(),
                loaded == null
                        ? null
                        : new StepOutput.SnapshotLoad(loaded.names(), loaded.bytes(), loaded.durationMs()),
                answer == null ? null : new StepOutput.RlmAnswer(answer.content(), answer.ready()));
    }

    static CodeError error(PyError e) {
        return e == null ? null : new CodeError(e.type(), e.message(), e.traceback(), e.interrupted(), e.line());
    }

    static List<Eviction> evicted(List<Evicted> evicted) {
        return evicted == null
                ? null
                : evicted.stream()
                        .map(v -> new Eviction(v.name(), v.sizeBytes(), v.sizeHuman(), v.spilled(), v.reason()))
                        .toList();
    }

    static MemoryUsage memory(MemoryUse m) {
        return m == null
                ? null
                : new MemoryUsage(
                        m.totalBytes(),
                        m.totalHuman(),
                        m.variableCount(),
                        m.spilledCount(),
                        m.limitBytes(),
                        m.percent(),
                        m.limitHuman(),
                        m.rssBytes(),
                        m.rssHuman());
    }

    static LoadedVar loaded(Loaded l) {
        return new LoadedVar(
                l.name(),
                l.type(),
                l.dataType(),
                l.sizeBytes(),
                l.sizeHuman(),
                l.preview(),
                l.durationMs(),
                evicted(l.evicted()),
                memory(l.memory()),
                l.length(),
                l.columns());
    }

    static VarPage page(Page p) {
        return new VarPage(
                p.varName(),
                p.type(),
                p.format(),
                p.totalChars(),
                p.offset(),
                p.returnedChars(),
                p.nextOffset(),
                p.value(),
                p.note());
    }

    static Variable variable(VarEntry v) {
        return new Variable(
                v.name(),
                v.status(),
                v.type(),
                v.sizeBytes(),
                v.sizeHuman(),
                v.created(),
                v.lastAccessed(),
                v.saved(),
                v.preview(),
                v.length(),
                v.columns(),
                v.notPersisted(),
                v.persisted());
    }

    static List<Variable> variables(List<VarEntry> entries) {
        return entries == null
                ? null
                : entries.stream().map(WireRecords::variable).toList();
    }

    static Variables variables(VarList list) {
        return new Variables(variables(list.variables()), memory(list.memory()));
    }

    static ClearResult cleared(Cleared c) {
        return new ClearResult(c.cleared(), c.freedBytes(), c.freedHuman(), memory(c.memory()));
    }

    static dev.rlmmcp.kernel.protocol.DataType dataType(DataType type) {
        return dev.rlmmcp.kernel.protocol.DataType.valueOf(type.name());
    }

    static McpSetup mcp(BridgeSetup setup) {
        return setup == null
                ? null
                : new McpSetup(
                        setup.servers().stream()
                                .map(s -> new McpSetup.Server(
                                        s.name(),
                                        s.alias(),
                                        s.tools().stream()
                                                .map(t -> new McpSetup.Tool(
                                                        t.name(), t.alias(), t.description(), t.inputSchema()))
                                                .toList()))
                                .toList(),
                        setup.discovered());
    }

    /** Core's callbacks on the kernel's channel: a refusal becomes the kernel's, with its code and message. */
    static KernelCallbacks callbacks(HostCallbacks callbacks) {
        return (kind, request) -> {
            try {
                return callbacks.handle(kind, request);
            } catch (CallbackRefused refused) {
                throw new CallbackException(refused.code(), refused.getMessage());
            }
        };
    }

    static KernelSettings settings(Settings s) {
        return new KernelSettings(
                s.defaultTimeout(),
                s.maxTimeout(),
                s.interruptGrace(),
                s.outputCap(),
                s.memoryLimitBytes(),
                s.cleanupThreshold(),
                s.cleanupTarget());
    }

    static KernelHealth health(KernelFactory kernels) {
        var budget = kernels.budget();
        var python = kernels.pythonIfKnown();
        return new KernelHealth(
                kernels.launcherName(),
                kernels.cgroup(),
                kernels.cgroupLimits(),
                kernels.sessionKernels(),
                kernels.warmKernels(),
                kernels.warmTarget(),
                budget.waiting(),
                budget.maxKernels(),
                budget.usedBytes(),
                budget.maxBytes(),
                python == null ? null : python.executable().toString(),
                python == null ? null : python.version(),
                kernels.settings().memoryLimitBytes());
    }

    static KernelLoss.Cause cause(dev.rlmmcp.kernel.channel.KernelDiedException.Cause cause) {
        return KernelLoss.Cause.valueOf(cause.name());
    }
}

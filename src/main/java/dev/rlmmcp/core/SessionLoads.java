package dev.rlmmcp.core;

import dev.rlmmcp.base.Bytes;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.base.Text;
import dev.rlmmcp.data.Download;
import dev.rlmmcp.data.StreamedLoad;
import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.kernel.channel.TransferAbortedException;
import dev.rlmmcp.kernel.protocol.KernelRequest;
import dev.rlmmcp.kernel.protocol.Loaded;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A session's loads into variables (text it is given, a file the kernel reads, a download streamed
 * to it), each under the session's lock, counted against its I/O budget and recorded in its trace.
 */
final class SessionLoads {

    private final String id;
    private final Settings settings;
    private final Guardrails guardrails;
    private final KernelCalls calls;
    private final SessionLedger ledger;

    SessionLoads(String id, Settings settings, Guardrails guardrails, KernelCalls calls, SessionLedger ledger) {
        this.id = id;
        this.settings = settings;
        this.guardrails = guardrails;
        this.calls = calls;
        this.ledger = ledger;
    }

    LoadResult data(String name, String data, DataType type, CallContext context) {
        long io = guardrails.limits().budgetBytes() == null ? data.length() : Text.utf8Length(data);
        return load(
                new KernelRequest.Load(name, WireRecords.dataType(type), null),
                data,
                io,
                "rlm_load_data " + name + " (" + type.wireName() + ")",
                null,
                null,
                context);
    }

    /** Loads a file the caller has already confined to the data root; the kernel reads it itself. */
    LoadResult file(String name, Path file, String shownPath, DataType type, CallContext context) {
        long size;
        try {
            size = Files.size(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (settings.memoryLimitBytes() > 0 && size > settings.memoryLimitBytes()) {
            throw new RlmException(
                    ErrorCode.TOO_LARGE,
                    "%s is %s, more than this session's memory limit of %s"
                            .formatted(shownPath, Bytes.human(size), Bytes.human(settings.memoryLimitBytes())),
                    "path",
                    "load a smaller file or a slice of it, or raise RLM_MAX_MEMORY_MB / --max-memory-mb");
        }
        return load(
                new KernelRequest.Load(name, WireRecords.dataType(type), file.toString()),
                null,
                size,
                "rlm_load_file " + name + " <- " + shownPath,
                shownPath,
                size,
                context);
    }

    /**
     * Streams a download into a variable: bytes go from the source to the kernel's pipe in bounded
     * chunks as they arrive, never whole in this JVM. A declared size over the memory limit is refused
     * before any byte moves; a stream that passes the limit is cut, and nothing is stored. A failed
     * source leaves the session as it was.
     */
    LoadResult stream(
            String name, DataType type, Download download, String argument, String what, CallContext context) {
        StreamedLoad stream = StreamedLoad.of(download, settings.memoryLimitBytes(), argument, context);
        try (var held = calls.enter(settings.maxTimeout());
                download) {
            ledger.requireOpen();
            long started = System.nanoTime();
            KernelCalls.Accepted<Loaded> accepted;
            try {
                accepted = calls.stream(
                        new KernelRequest.Load(name, WireRecords.dataType(type), null), stream.body(), context);
            } catch (TransferAbortedException e) {
                throw stream.failed(e.getCause());
            }
            double ms = (System.nanoTime() - started) / 1e6;
            long sent = stream.sent();
            Loaded loaded = accepted.body();
            GuardrailStop guardrail = ledger.settle(null, guardrails.afterLoad(sent), loaded.memory());
            recordLoad(what, loaded, ms, sent, guardrail);
            return new LoadResult(
                    id,
                    WireRecords.loaded(loaded),
                    null,
                    null,
                    stream.transfer(ms),
                    guardrail,
                    accepted.notSaved(),
                    accepted.stillWriting(),
                    accepted.lostAtStop(),
                    accepted.replaced());
        }
    }

    private LoadResult load(
            KernelRequest.Load request,
            String data,
            long ioBytes,
            String what,
            String path,
            Long fileBytes,
            CallContext context) {
        try (var held = calls.enter(settings.maxTimeout())) {
            ledger.requireOpen();
            long started = System.nanoTime();
            KernelCalls.Accepted<Loaded> accepted = calls.call(request, data, settings.maxTimeout(), context);
            double ms = (System.nanoTime() - started) / 1e6;
            Loaded loaded = accepted.body();
            GuardrailStop guardrail = ledger.settle(null, guardrails.afterLoad(ioBytes), loaded.memory());
            recordLoad(what, loaded, ms, ioBytes, guardrail);
            return new LoadResult(
                    id,
                    WireRecords.loaded(loaded),
                    path,
                    fileBytes,
                    null,
                    guardrail,
                    accepted.notSaved(),
                    accepted.stillWriting(),
                    accepted.lostAtStop(),
                    accepted.replaced());
        }
    }

    private void recordLoad(String what, Loaded loaded, double ms, long io, GuardrailStop guardrail) {
        ledger.record(
                null,
                "load",
                what,
                "done",
                loaded.type() + ", " + loaded.sizeHuman(),
                List.of(loaded.name()),
                ms,
                io,
                guardrail == null ? null : guardrail.guardrail(),
                null,
                null);
    }
}

package dev.rlmmcp.core;

import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.base.Text;
import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.kernel.channel.Kernel;
import dev.rlmmcp.kernel.channel.KernelCallbacks;
import dev.rlmmcp.kernel.channel.KernelDiedException;
import dev.rlmmcp.kernel.channel.KernelReply;
import dev.rlmmcp.kernel.channel.TransferAbortedException;
import dev.rlmmcp.kernel.protocol.Cleared;
import dev.rlmmcp.kernel.protocol.ExecResult;
import dev.rlmmcp.kernel.protocol.KernelRequest;
import dev.rlmmcp.kernel.protocol.Loaded;
import dev.rlmmcp.kernel.protocol.Refusal;
import dev.rlmmcp.kernel.protocol.SnapshotWritten;
import dev.rlmmcp.kernel.protocol.VarList;
import dev.rlmmcp.store.StateStore;
import java.io.InputStream;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The calls a session makes on its kernel, one at a time: the lock taken within the call's own
 * limit, the kernel made ready (what earlier steps changed written first, a dead kernel replaced and
 * restored), the reply accepted (what it changed snapshotted, a refusal thrown), and a kernel that
 * died turned into what the caller is told was lost.
 */
final class KernelCalls {

    private static final Logger log = LoggerFactory.getLogger(KernelCalls.class);

    private final String id;
    private final SessionLock lock;
    private final SessionKernel kernel;
    private final Snapshots snapshots;
    private final SeenVariables seen;
    private final Settings settings;
    private final StateStore store;
    private final SessionLedger ledger;
    /** Snapshot a step's changes before its reply is sent. */
    private final boolean durable;
    /** The kernel writing a snapshot outside any call, or null: a call that waits too long for it kills it. */
    private volatile Kernel writingSnapshot;
    /** A kernel death found before the current call ran: told in the call's reply (under the lock). */
    private KernelLoss replaced;
    /** Variables whose write a stop of the server cut short, found by the restore: told in the next reply. */
    private List<String> lostAtStop;

    KernelCalls(
            String id,
            SessionLock lock,
            SessionKernel kernel,
            Snapshots snapshots,
            SeenVariables seen,
            Settings settings,
            StateStore store,
            SessionLedger ledger) {
        this.id = id;
        this.lock = lock;
        this.kernel = kernel;
        this.snapshots = snapshots;
        this.seen = seen;
        this.settings = settings;
        this.store = store;
        this.ledger = ledger;
        this.durable = store != null && store.durableReplies();
    }

    /** A kernel's answer, accepted under the lock: its body, and what the caller is to be told with it. */
    record Accepted<R>(
            R body, List<String> notSaved, List<String> stillWriting, List<String> lostAtStop, KernelLoss replaced) {}

    /** A step as it ran: the kernel's accepted answer and, if interrupted, after how long; or the kernel's loss. */
    record Ran(Accepted<ExecResult> accepted, long interruptedAfterMs, KernelLoss loss) {

        ExecResult exec() {
            return accepted == null ? null : accepted.body();
        }
    }

    /**
     * Takes the session's lock for a call whose own time limit is {@code timeout} (null: the longest),
     * waiting no longer than that limit and the grace. A snapshot written outside any call that still
     * holds the session then is one the kernel does not finish (code in it may have taken the request
     * off its pipe): the kernel is killed, so that the next call runs on a fresh one, and this call is
     * refused without running.
     */
    SessionLock.Held enter(Duration timeout) {
        Duration wait = (timeout == null ? settings.maxTimeout() : timeout).plus(settings.interruptGrace());
        long started = System.nanoTime();
        try {
            return lock.call(wait);
        } catch (RlmException busy) {
            Kernel stuck = writingSnapshot;
            if (stuck == null || lock.callRunning() || System.nanoTime() - started < wait.toNanos()) {
                throw busy;
            }
            stuck.abandon("the kernel did not finish writing its snapshot while a call waited " + Text.seconds(wait)
                    + " s for it, so it was killed (code run in the kernel may have read its requests)");
            throw new RlmException(
                    ErrorCode.TIMEOUT,
                    "session " + id + " waited " + Text.seconds(wait)
                            + " s for its kernel to write a snapshot, which it did not finish: the kernel was killed, and the"
                            + " next call runs on a fresh kernel restored from the last snapshot (its reply names what was"
                            + " lost); this call did not run",
                    "session_id",
                    "send the call again");
        }
    }

    /** A request that is no step, under the lock; a kernel that dies during it is replaced, and the loss refused. */
    <R> Accepted<R> call(KernelRequest<R> request, String data, Duration timeout, CallContext context) {
        try (var held = enter(timeout)) {
            try {
                return accept(exchange(request, data, timeout, KernelCallbacks.NONE, context));
            } catch (KernelDiedException e) {
                throw kernelError(e, timeout); // under the lock: the replacement is this call's
            }
        }
    }

    /** {@link #call}'s answer in core's records ({@code ours} maps its body), for the session's caller. */
    <R, T> KernelAnswer<T> answer(Accepted<R> accepted, Function<R, T> ours) {
        return new KernelAnswer<>(
                id,
                ours.apply(accepted.body()),
                accepted.notSaved(),
                accepted.stillWriting(),
                accepted.lostAtStop(),
                accepted.replaced());
    }

    /** A step's code run (under the lock): a kernel that dies during it is replaced, and the loss returned. */
    Ran exec(KernelRequest.Exec request, Duration limit, KernelCallbacks callbacks, CallContext context) {
        try {
            KernelReply<ExecResult> reply = exchange(request, null, limit, callbacks, context);
            Accepted<ExecResult> accepted = accept(reply);
            return new Ran(
                    accepted,
                    reply.interrupted() && accepted.body().interrupted() ? reply.interruptedAfterMs() : -1,
                    null);
        } catch (KernelDiedException e) {
            return new Ran(null, -1, kernelLost(e, limit));
        }
    }

    /** A load whose bytes stream from {@code source} to the kernel (under the lock); a failed source is thrown as is. */
    Accepted<Loaded> stream(KernelRequest.Load request, InputStream source, CallContext context)
            throws TransferAbortedException {
        long started = System.nanoTime();
        try {
            ledger.lastActive = Instant.now();
            Kernel k = bindable(ready(settings.maxTimeout()), request.name());
            return accept(k.callStreaming(
                    request, source, left(settings.maxTimeout(), started), settings.interruptGrace(), context));
        } catch (KernelDiedException e) {
            throw kernelError(e, settings.maxTimeout());
        } finally {
            ledger.lastActive = Instant.now();
        }
    }

    private <R> KernelReply<R> exchange(
            KernelRequest<R> request, String data, Duration timeout, KernelCallbacks callbacks, CallContext context)
            throws KernelDiedException {
        ledger.lastActive = Instant.now();
        long started = System.nanoTime();
        Kernel k = ready(timeout);
        if (request instanceof KernelRequest.Load load) {
            bindable(k, load.name());
        }
        try {
            return k.call(request, data, left(timeout, started), settings.interruptGrace(), callbacks, context);
        } finally {
            ledger.lastActive = Instant.now();
        }
    }

    /** What is left of a call's time limit ({@code timeout}, null: none) since {@code started} (at least 1 ms). */
    private static Duration left(Duration timeout, long started) {
        return timeout == null
                ? null
                : Duration.ofNanos(Math.max(1_000_000, timeout.toNanos() - (System.nanoTime() - started)));
    }

    /**
     * The kernel for the next call (under the lock), whose time limit is {@code limit}. What earlier
     * steps changed and no snapshot holds is written first, so that this call, however long it runs
     * or if it kills the kernel, cannot hold it back; that write counts against the call's limit, and
     * a kernel that does not finish it within the limit and grace is killed, which ends the call (the
     * caller reports the loss). A kernel that died since the last call is replaced and restored from
     * the snapshot, and the loss is kept for this call's reply: the call then runs.
     */
    private Kernel ready(Duration limit) throws KernelDiedException {
        Kernel current = kernel.current();
        if (snapshots.pending() && store != null && current != null && current.isAlive()) {
            snapshots.take(current, limit == null ? settings.maxTimeout() : limit, settings.interruptGrace());
        }
        if (current != null && !current.isAlive()) {
            replaced = kernelLost(current.death(), null);
        }
        Kernel k = kernel.get();
        List<String> unwritten = kernel.takeUnwritten();
        if (!unwritten.isEmpty()) {
            lostAtStop = unwritten;
        }
        return k;
    }

    /**
     * The kernel, if a load may bind {@code name}: refused before any byte is sent when it is one of
     * the names the kernel's harness reserves (its ready frame lists them).
     */
    private static Kernel bindable(Kernel k, String name) {
        if (k.ready().reserved().contains(name)) {
            throw RlmException.invalid(
                    "name",
                    "'" + name + "' is reserved by rlm-mcp",
                    "choose another name; use a Python identifier such as logs or rows_2024");
        }
        return k;
    }

    /**
     * Lists the variables if the kernel is running and idle, never starting one or waiting on running
     * code; returns whether it was asked (the list is kept in what was seen).
     */
    boolean askVariablesIfIdle() {
        try (var held = lock.tryHold()) {
            Kernel k = held == null ? null : kernel.current();
            if (k == null || !k.isAlive()) {
                return false;
            }
            KernelReply<VarList> reply =
                    k.call(new KernelRequest.Vars(), settings.defaultTimeout(), settings.interruptGrace());
            if (reply.ok()) {
                seen.see(WireRecords.variables(reply.body().variables()));
            }
            return reply.ok();
        } catch (KernelDiedException e) {
            return false; // the session's next call finds the dead kernel and reports the loss
        }
    }

    /** The snapshot is due: taken now, or as soon as the call under way ends. */
    void snapshotWhenDue() {
        // a call that holds the session all that time writes the snapshot first itself
        try (var held = lock.tryHold(settings.maxTimeout())) {
            Kernel k = held == null ? null : kernel.current();
            if (store != null && k != null && k.isAlive() && snapshots.isDue()) {
                takeSnapshot(k);
            }
        }
    }

    /**
     * Has the kernel write every variable changed since the last snapshot (under the lock). Returns
     * its reply, or null if there is no kernel or nothing to write.
     */
    SnapshotWritten snapshot() {
        Kernel k = kernel.current();
        if (store == null || k == null || !k.isAlive() || !snapshots.pending()) {
            return null;
        }
        return takeSnapshot(k);
    }

    private SnapshotWritten takeSnapshot(Kernel k) {
        writingSnapshot = k;
        try {
            return snapshots.take(k, settings.maxTimeout(), settings.interruptGrace());
        } catch (KernelDiedException e) {
            // left in place: the next call finds it dead, replaces it and names what was lost
            log.warn(
                    "session {}: the kernel died writing its snapshot ({}); not saved: {}; the next call restores "
                            + "the last snapshot",
                    id,
                    e.getMessage(),
                    String.join(", ", snapshots.unsavedNow("").keySet()));
            return null;
        } finally {
            writingSnapshot = null;
        }
    }

    /**
     * The kernel's answer, or its refusal thrown. The kernel wrote the call's changes before it
     * answered, but for those too large to write without delaying the reply: they are written now in
     * the background, and those the call reported setting are named in {@code stillWriting}. With
     * durable replies, they are written before the answer is returned instead (what could not be is
     * in {@code notSaved}). A kernel replaced before the call ran, and what a stop of the server had
     * cut short, are handed on to be told.
     */
    private <R> Accepted<R> accept(KernelReply<R> reply) {
        boolean step = snapshots.noteUnsaved(reply.unsaved());
        if (step) {
            noteNotPersisted(reply.body());
        }
        // a step that changed nothing still answers for what earlier steps left unsaved (a commit refused while the
        // cluster database or S3 was away): it tries again, and says what is still not saved, so that no reply
        // of a repeated step reads as "saved" while the cluster holds none of it
        boolean answersForChanges = step || reply.body() instanceof ExecResult || reply.body() instanceof Loaded;
        if (answersForChanges && durable && snapshots.pending()) {
            snapshot();
        }
        KernelLoss before = replaced;
        replaced = null;
        List<String> lost = lostAtStop;
        lostAtStop = null;
        if (!reply.ok()) {
            throw refusal(reply.refusal());
        }
        List<String> notSaved = answersForChanges && durable && snapshots.pending()
                ? List.copyOf(snapshots.unsavedNow("").keySet())
                : null;
        List<String> stillWriting = null;
        if (step && !durable && snapshots.pending()) {
            List<String> set = reply.body() instanceof ExecResult exec
                    ? exec.variablesChanged()
                    : reply.body() instanceof Loaded loaded ? List.of(loaded.name()) : List.of();
            List<String> writing =
                    set.stream().filter(reply.unsaved()::contains).toList();
            stillWriting = writing.isEmpty() ? null : writing;
        }
        return new Accepted<>(reply.body(), notSaved, stillWriting, lost, before);
    }

    private void noteNotPersisted(Object body) {
        switch (body) {
            case ExecResult exec ->
                snapshots.noteNotPersisted(
                        Stream.concat(exec.variablesChanged().stream(), exec.variablesDeleted().stream())
                                .toList(),
                        exec.notPersisted());
            case Loaded loaded -> snapshots.noteNotPersisted(List.of(loaded.name()), null);
            case Cleared cleared -> snapshots.noteNotPersisted(cleared.cleared(), null);
            case null, default -> {}
        }
    }

    private static RlmException refusal(Refusal refusal) {
        ErrorCode code = ErrorCode.of(refusal.code());
        return new RlmException(
                code,
                refusal.message(),
                refusal.argument(),
                switch (code) {
                    case VARIABLE_NOT_FOUND -> "call rlm_list_vars to see the variables of this session";
                    case INVALID_DATA -> "check that data_type matches the data, or load it as text";
                    case OUT_OF_MEMORY -> "free memory with rlm_clear, or load a smaller part of the data";
                    case INTERRUPTED -> "the load was cancelled or ran past --max-timeout-s; load a smaller part";
                    default -> null;
                });
    }

    /** The kernel died during a call that returns no step: the loss, as a refusal. */
    private RlmException kernelError(KernelDiedException e, Duration timeout) {
        return new RlmException(
                ErrorCode.KERNEL_ERROR,
                kernelLost(e, timeout).message(),
                null,
                "if the data is too big for memory, load a smaller part or raise the memory limit");
    }

    /**
     * The kernel died, during a call ({@code timeout} its limit) or, with {@code timeout} null, since
     * the last one: it is replaced, and the loss says what was lost.
     */
    private KernelLoss kernelLost(KernelDiedException e, Duration timeout) {
        ledger.memoryBytes = 0;
        seen.forget();
        Set<String> lost = snapshots.lost();
        if (lostAtStop != null) {
            lost.addAll(lostAtStop);
            lostAtStop = null;
        }
        if (replaced != null) {
            // the kernel that replaced one found dead before this call died too: both losses count
            lost.addAll(replaced.lost());
            replaced = null;
        }
        KernelLoss loss = kernel.replace(e, timeout, lost, snapshots.at());
        ledger.save();
        return loss;
    }
}

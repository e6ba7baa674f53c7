package dev.rlmmcp.core;

import dev.rlmmcp.kernel.channel.Kernel;
import dev.rlmmcp.kernel.channel.KernelDiedException;
import dev.rlmmcp.kernel.channel.KernelReply;
import dev.rlmmcp.kernel.protocol.KernelRequest;
import dev.rlmmcp.kernel.protocol.SnapshotWritten;
import dev.rlmmcp.store.StateStore;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When a session's variables are snapshotted, and what the last snapshot holds. The kernel writes a
 * call's changes itself before its reply, up to a size and time budget; what it leaves (a change too
 * large to write without delaying the reply) is snapshotted by the session right after the reply,
 * under its lock, through {@link #take} ({@code whenDue}). A store that copies snapshots elsewhere
 * is given one at the latest the store's debounce time after the first step no copy holds; later
 * steps do not push that time back (a maximum wait, not a debounce that steady steps could starve).
 * The session also writes what is pending before its next call runs.
 */
final class Snapshots {

    private static final Logger log = LoggerFactory.getLogger(Session.class);

    private final String id;
    private final StateStore store;
    private final Duration wait;
    private final ScheduledExecutorService timer;
    private final Runnable whenDue;
    private final Consumer<Instant> saveRecord;
    /** Variables changed since the last snapshot, and those the last snapshot could not hold (with why). */
    private volatile Set<String> unsaved = Set.of();

    private volatile Map<String, String> notPersisted = Map.of();
    /** A step was recorded since the last snapshot, which a store that copies records has not copied. */
    private volatile boolean recordBehind;

    private volatile Instant at;
    /** The kernel's last reply left nothing unwritten: the snapshot holds everything as of that call. */
    private volatile boolean written;

    private volatile SnapshotTaken last;
    private ScheduledFuture<?> due;

    Snapshots(
            String id,
            StateStore store,
            ScheduledExecutorService timer,
            Runnable whenDue,
            Consumer<Instant> saveRecord) {
        this(id, store, store == null ? null : store.snapshotDebounce(), timer, whenDue, saveRecord);
    }

    /** With {@code wait} (null: no snapshots are scheduled) given apart from the store, for tests. */
    Snapshots(
            String id,
            StateStore store,
            Duration wait,
            ScheduledExecutorService timer,
            Runnable whenDue,
            Consumer<Instant> saveRecord) {
        this.id = id;
        this.store = store;
        this.wait = wait;
        this.timer = timer;
        this.whenDue = whenDue;
        this.saveRecord = saveRecord;
    }

    /** When the last snapshot the store holds was taken, or null. */
    Instant at() {
        return at;
    }

    void restoredAt(Instant at) {
        this.at = at;
    }

    /** The account of the last snapshot taken since the server started, or null. */
    SnapshotTaken last() {
        return last;
    }

    /** Whether variables changed that no snapshot holds. */
    boolean pending() {
        return !unsaved.isEmpty();
    }

    /**
     * Whether a snapshot is due: variables changed, or (for a store that copies the session's record
     * with each snapshot) steps were recorded since the last one, which the copy should have too.
     */
    boolean isDue() {
        return pending() || recordBehind;
    }

    /**
     * Takes the variables changed since the last snapshot, as a kernel's reply lists them (null if it
     * does not): a snapshot is then due. Returns true if listed (a step that may change variables).
     */
    boolean noteUnsaved(List<String> pending) {
        if (pending == null) {
            return false;
        }
        unsaved = new LinkedHashSet<>(pending);
        if (store != null && store.snapshots().copiesRecords()) {
            recordBehind = true;
        } else {
            written = pending.isEmpty();
        }
        later();
        return true;
    }

    /**
     * A step or load is being recorded: if the kernel wrote everything before its reply, the snapshot
     * holds it as of now (for a store that copies snapshots, only once the copy is made).
     */
    void recorded() {
        if (written) {
            written = false;
            at = Instant.now();
        }
    }

    /**
     * A call's reply: of the variables it set or deleted ({@code touched}), those the snapshot cannot
     * hold ({@code failing}, each with why); the others it holds now.
     */
    void noteNotPersisted(List<String> touched, Map<String, String> failing) {
        if (touched.isEmpty() && (failing == null || failing.isEmpty())) {
            return;
        }
        Map<String, String> now = new LinkedHashMap<>(notPersisted);
        touched.forEach(now::remove);
        if (failing != null) {
            now.putAll(failing);
        }
        notPersisted = Map.copyOf(now);
    }

    /** The session is being deleted: nothing is to be saved. */
    void forget() {
        unsaved = Set.of();
    }

    /** The kernel died: what it held that no snapshot has. */
    Set<String> lost() {
        Set<String> lost = new LinkedHashSet<>(unsaved);
        lost.addAll(notPersisted.keySet());
        unsaved = Set.of();
        return lost;
    }

    /** What no snapshot holds now, each with why: {@code why} for those changed since the last one. */
    Map<String, String> unsavedNow(String why) {
        Map<String, String> names = new LinkedHashMap<>();
        unsaved.forEach(n -> names.put(n, why));
        notPersisted.forEach(names::putIfAbsent);
        return names;
    }

    /**
     * After a call: what the kernel left unwritten is snapshotted at once, in the background; a copy
     * of the snapshot to a store that keeps one is due at the latest the wait after the first step
     * that no copy holds. A snapshot already due stays due when it was: later steps do not postpone it.
     */
    synchronized void later() {
        if (wait == null || timer == null || !isDue()) {
            return;
        }
        long delay = pending() ? 0 : wait.toMillis();
        if (due != null && !due.isDone()) {
            if (due.getDelay(TimeUnit.MILLISECONDS) <= delay) {
                return;
            }
            due.cancel(false);
        }
        try {
            Runnable start = () -> Thread.ofVirtual().name("snapshot-" + id).start(whenDue);
            due = timer.schedule(start, delay, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException shuttingDown) {
            // the server is stopping: close() snapshots every session
        }
    }

    synchronized void cancel() {
        if (due != null) {
            due.cancel(false);
            due = null;
        }
    }

    /**
     * Has {@code kernel} write every variable changed since the last snapshot, then saves the record
     * and commits the snapshot to the store, within {@code timeout} (a kernel that stops answering is
     * killed then, and a stopped one at once). The caller holds the session's lock. Returns the kernel's
     * reply, or null if the kernel refused.
     */
    SnapshotWritten take(Kernel kernel, Duration timeout, Duration grace) throws KernelDiedException {
        KernelReply<SnapshotWritten> reply = kernel.call(new KernelRequest.Snapshot(), timeout, grace);
        if (!reply.ok()) {
            log.warn("session {}: snapshot failed: {}", id, reply.refusal().message());
            return null;
        }
        SnapshotWritten body = reply.body();
        Instant now = Instant.now();
        Set<String> written = unsaved;
        unsaved = Set.of();
        recordBehind = false;
        notPersisted = Map.copyOf(body.notPersisted());
        try {
            saveRecord.accept(now);
            if (store.snapshots().copiesRecords()) {
                // else the record is committed with the next batch of writes: the manifest is what restores
                store.flush();
            }
        } catch (RuntimeException e) {
            stillUnsaved(written);
            recordBehind = true;
            throw e;
        }
        long copying = System.nanoTime();
        Double storedMs = null;
        String storeError = null;
        try {
            // after the record is saved, so that a store that copies the record copies this snapshot's
            store.snapshots().committed(id);
            storedMs = Math.round((System.nanoTime() - copying) / 1e4) / 100.0;
        } catch (IOException | RuntimeException e) {
            log.warn("session {}: snapshot not copied to the snapshot store: {}", id, e.getMessage());
            storeError = e.getMessage();
            // not saved until the store has it (in a cluster: uploaded and pointed at by a fenced commit): the
            // next step tries again and names these in not_saved meanwhile
            stillUnsaved(written);
        }
        // shown only now: a snapshot_at that rlm_sessions lists is in the store
        at = now;
        last = new SnapshotTaken(now.toString(), body.bytes(), body.durationMs(), body.written(), storedMs, storeError);
        return body;
    }

    private void stillUnsaved(Set<String> written) {
        Set<String> both = new java.util.LinkedHashSet<>(written);
        both.addAll(unsaved);
        unsaved = Set.copyOf(both);
    }
}

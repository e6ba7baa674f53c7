package dev.rlmmcp.core;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.kernel.Kernel;
import dev.rlmmcp.core.kernel.KernelDiedException;
import dev.rlmmcp.core.kernel.KernelReply;
import dev.rlmmcp.core.store.StateStore;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When a session's variables are snapshotted, and what the last snapshot holds. The snapshot itself
 * is taken by the session, under its lock, through {@link #take}; {@code whenIdle} is how the session
 * takes one once no step has come for the store's debounce time.
 */
final class Snapshots {

    private static final Logger log = LoggerFactory.getLogger(Session.class);

    private final String id;
    private final StateStore store;
    private final ScheduledExecutorService timer;
    private final ObjectMapper json;
    private final Runnable whenIdle;
    private final Consumer<Instant> saveRecord;
    /** Variables changed since the last snapshot, and those the last snapshot could not hold. */
    private Set<String> unsaved = Set.of();
    private Set<String> notPersisted = Set.of();
    private volatile Instant at;
    private volatile ObjectNode last;
    private ScheduledFuture<?> due;

    Snapshots(String id, StateStore store, ScheduledExecutorService timer, ObjectMapper json, Runnable whenIdle,
            Consumer<Instant> saveRecord) {
        this.id = id;
        this.store = store;
        this.timer = timer;
        this.json = json;
        this.whenIdle = whenIdle;
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
    ObjectNode last() {
        return last;
    }

    boolean pending() {
        return !unsaved.isEmpty();
    }

    /** Takes from a kernel's reply the variables changed since the last snapshot, if it lists them: one is then due. */
    void noteUnsaved(ObjectNode reply) {
        JsonNode pending = reply.remove("variables_unsaved");
        if (pending != null) {
            Set<String> names = new LinkedHashSet<>();
            pending.forEach(n -> names.add(n.asText()));
            unsaved = names;
            later();
        }
    }

    /** The session is being deleted: nothing is to be saved. */
    void forget() {
        unsaved = Set.of();
    }

    /** The kernel died: what it held that no snapshot has. */
    Set<String> lost() {
        Set<String> lost = new LinkedHashSet<>(unsaved);
        lost.addAll(notPersisted);
        unsaved = Set.of();
        return lost;
    }

    /** After a step that changed variables: a snapshot once no further step has come for the debounce time. */
    synchronized void later() {
        if (store == null || timer == null || unsaved.isEmpty()) {
            return;
        }
        if (due != null) {
            due.cancel(false);
        }
        try {
            due = timer.schedule(() -> Thread.ofVirtual().name("snapshot-" + id).start(whenIdle),
                    store.snapshotDebounce().toMillis(), TimeUnit.MILLISECONDS);
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
     * and commits the snapshot to the store. The caller holds the session's lock. Returns the kernel's
     * reply, or null if the kernel refused.
     */
    ObjectNode take(Kernel kernel, Duration grace) throws KernelDiedException {
        KernelReply reply = kernel.call(json.createObjectNode().put("op", "snapshot"), null, null, grace);
        ObjectNode body = reply.body();
        if (!reply.ok()) {
            log.warn("session {}: snapshot failed: {}", id, body.path("message").asText());
            return null;
        }
        Instant now = Instant.now();
        ObjectNode done = json.createObjectNode().put("at", now.toString())
                .put("bytes_written", body.path("bytes").asLong()).put("duration_ms", body.path("duration_ms").asDouble());
        done.set("written", body.path("written"));
        unsaved = Set.of();
        Set<String> refused = new LinkedHashSet<>();
        body.path("not_persisted").fieldNames().forEachRemaining(refused::add);
        notPersisted = refused;
        saveRecord.accept(now);
        store.flush();
        long copying = System.nanoTime();
        try {
            // after the record is saved, so that a store that copies the record copies this snapshot's
            store.snapshots().committed(id);
            done.put("stored_ms", Math.round((System.nanoTime() - copying) / 1e4) / 100.0);
        } catch (IOException | RuntimeException e) {
            log.warn("session {}: snapshot not copied to the snapshot store: {}", id, e.getMessage());
            done.put("store_error", e.getMessage());
        }
        // shown only now: a snapshot_at that rlm_sessions lists is in the store
        at = now;
        last = done;
        return body;
    }
}

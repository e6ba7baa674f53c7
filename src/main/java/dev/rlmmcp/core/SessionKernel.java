package dev.rlmmcp.core;

import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.FileTrees;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.kernel.channel.Kernel;
import dev.rlmmcp.kernel.channel.KernelDiedException;
import dev.rlmmcp.kernel.channel.KernelReply;
import dev.rlmmcp.kernel.protocol.Detached;
import dev.rlmmcp.kernel.protocol.KernelRequest;
import dev.rlmmcp.kernel.protocol.Restored;
import dev.rlmmcp.store.NotHeldException;
import dev.rlmmcp.store.StateStore;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kernel of one session: started on first use and, with a store, restored from the session's
 * snapshot; replaced at once when it dies. Used under the session's lock, except {@link #running}
 * and {@link #restarts}.
 */
final class SessionKernel {

    private static final Logger log = LoggerFactory.getLogger(Session.class);

    private final String id;
    private final KernelFactory kernels;
    private final Settings settings;
    private final StateStore store;
    private Kernel kernel;
    private int restarts;
    private Restored restored;
    /** What the last restore found a stop had cut short, until the session's next reply says so. */
    private List<String> unwritten = List.of();
    /** A session made here whose kernel has not started yet: nothing of it is stored, nothing to check out. */
    private boolean unstored;
    /** How long a start waits in line for a place at capacity; null: the budget's few seconds. */
    private volatile Duration queueFor;
    /** Without a store: the directory the kernel may write (for passing values to other kernels), or null. */
    private Path scratch;

    private Path hidden;

    SessionKernel(String id, KernelFactory kernels, StateStore store) {
        this.id = id;
        this.kernels = kernels;
        this.settings = kernels.settings();
        this.store = store;
    }

    /** The kernel, started now if there is none. */
    Kernel get() {
        if (kernel == null) {
            kernel = start();
        }
        return kernel;
    }

    /** The kernel if one was started, else null. */
    Kernel current() {
        return kernel;
    }

    boolean running() {
        Kernel k = kernel;
        return k != null && k.isAlive();
    }

    int restarts() {
        return restarts;
    }

    /**
     * The variables a reply had reported whose write a stop of the server cut short, as the last
     * restore found them; each is returned once, for the reply that tells the agent.
     */
    List<String> takeUnwritten() {
        List<String> names = unwritten;
        unwritten = List.of();
        return names;
    }

    /** Starts wait in line for a place up to {@code wait}. */
    void queueFor(Duration wait) {
        queueFor = wait;
    }

    /**
     * A session kept in memory only whose kernel may write {@code dir} (deleted with the kernel) and does
     * not see {@code hidden}: the warm kernels serve such a session as they serve stored ones.
     */
    void scratch(Path dir, Path hidden) {
        this.scratch = dir;
        this.hidden = hidden;
    }

    /** Where the kernel sees the directory it may write, on the host; null if it has none. */
    Path writableDir() {
        if (store == null) {
            return scratch;
        }
        return store.snapshots().root().resolve(id);
    }

    /** This session was just made (not read back): its first kernel needs no checkout of a snapshot. */
    void madeHere() {
        unstored = true;
    }

    void restoredRestarts(int restarts) {
        this.restarts = restarts;
    }

    void close() {
        if (kernel != null) {
            kernel.close();
            kernel = null;
        }
        if (scratch != null) {
            try {
                FileTrees.deleteTree(scratch);
            } catch (IOException e) {
                log.debug("scratch directory {} not removed: {}", scratch, e.toString());
            }
        }
    }

    /**
     * A kernel for this session: with a store, one that may write the session's snapshot directory
     * and has restored the snapshot there (functions, classes and imports at once, other variables
     * when first used). {@code restored} keeps the kernel's account of the restore.
     */
    private Kernel start() {
        if (store == null) {
            Kernel fresh = kernels.start(id, scratch, hidden, queueFor);
            if (scratch != null) {
                detach(fresh);
            }
            return fresh;
        }
        Path dir = snapshotDir();
        Kernel fresh = kernels.start(id, dir, store.directory(), queueFor);
        String inside = kernels.writableDirInside(dir).toString();
        Restored attached = fresh.attachedTo(inside);
        if (attached != null && isEmpty(dir)) {
            // a warm kernel that sees its spare directory, now this new session's, where it restored it
            restored = attached;
            return fresh;
        }
        restoreSnapshot(fresh, inside);
        return fresh;
    }

    /** The directory of this stored session's snapshot, checked out unless the session is new. */
    private Path snapshotDir() {
        try {
            // a new session's directory is made by its kernel's start: a warm kernel's is renamed there
            Path dir = unstored
                    ? store.snapshots().root().resolve(id)
                    : store.snapshots().checkout(id);
            unstored = false;
            return dir;
        } catch (NotHeldException e) {
            throw ClusterRefusals.notHeld(id, e.getMessage());
        } catch (IOException e) {
            throw new RlmException(
                    ErrorCode.KERNEL_UNAVAILABLE,
                    "cannot prepare the snapshot of session " + id + ": " + e.getMessage(),
                    null,
                    "check that the state directory is writable");
        }
    }

    /** Has {@code fresh} restore the snapshot it sees at {@code inside}; closes it if it dies doing so. */
    private void restoreSnapshot(Kernel fresh, String inside) {
        try {
            KernelReply<Restored> reply =
                    fresh.call(new KernelRequest.Restore(inside), settings.maxTimeout(), settings.interruptGrace());
            if (!reply.ok()) {
                log.warn(
                        "session {}: snapshot not restored: {}",
                        id,
                        reply.refusal().message());
            }
            restored = reply.body();
            if (restored != null && !restored.unwritten().isEmpty()) {
                log.warn(
                        "session {}: the server had stopped while these were being written; their last values are "
                                + "lost: {}",
                        id,
                        String.join(", ", restored.unwritten()));
                unwritten = restored.unwritten();
            }
        } catch (KernelDiedException e) {
            fresh.close();
            throw new RlmException(
                    ErrorCode.KERNEL_UNAVAILABLE,
                    "the kernel died restoring session " + id + "'s snapshot: " + e.getMessage(),
                    null,
                    "the snapshot may be too large for the memory limit");
        }
    }

    /** A warm kernel comes with its directory attached for snapshots: a kernel in memory only writes none. */
    private void detach(Kernel fresh) {
        try {
            KernelReply<Detached> reply = fresh.call(
                    new KernelRequest.Detach(kernels.writableDirInside(scratch).toString()),
                    settings.maxTimeout(),
                    settings.interruptGrace());
            if (!reply.ok()) {
                log.warn(
                        "{}: the kernel keeps writing snapshots: {}",
                        id,
                        reply.refusal().message());
            }
        } catch (KernelDiedException e) {
            fresh.close();
            throw new RlmException(
                    ErrorCode.KERNEL_UNAVAILABLE,
                    "the kernel of " + id + " died as it started: " + e.getMessage(),
                    null,
                    "retry; if it persists, check the server log");
        }
    }

    private static boolean isEmpty(Path dir) {
        try {
            return FileTrees.isEmpty(dir);
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * The kernel died during a call ({@code timeout} its limit) or, with {@code timeout} null, since
     * the last call: closes it and starts a fresh one if it can. {@code lost} names the variables no
     * snapshot holds, {@code snapshotAt} when the last snapshot was taken.
     */
    KernelLoss replace(KernelDiedException e, Duration timeout, Set<String> lost, Instant snapshotAt) {
        Kernel dead = kernel;
        kernel = null;
        restarts++;
        if (dead != null) {
            dead.close();
        }
        String startFailure = null;
        try {
            restored = null;
            kernel = start();
        } catch (RlmException failure) {
            startFailure = failure.getMessage();
        }
        boolean counted = store != null && kernel != null && restored != null;
        Set<String> all = new java.util.LinkedHashSet<>(lost);
        all.addAll(takeUnwritten());
        return new KernelLoss(
                WireRecords.cause(e.reason()),
                e.exit(),
                e.getMessage(),
                timeout,
                store != null,
                startFailure,
                snapshotAt,
                counted ? restored.spilled().size() : null,
                counted ? restored.restored().size() : null,
                store == null ? List.of() : List.copyOf(all),
                restarts);
    }
}

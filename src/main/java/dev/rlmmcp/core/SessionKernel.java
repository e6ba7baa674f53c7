package dev.rlmmcp.core;

import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.base.Text;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.Settings;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.kernel.channel.Kernel;
import dev.rlmmcp.kernel.channel.KernelDiedException;
import dev.rlmmcp.kernel.channel.KernelReply;
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
    private ObjectNode restored;

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

    void restoredRestarts(int restarts) {
        this.restarts = restarts;
    }

    void close() {
        if (kernel != null) {
            kernel.close();
            kernel = null;
        }
    }

    /**
     * A kernel for this session: with a store, one that may write the session's snapshot directory
     * and has restored the snapshot there (functions, classes and imports at once, other variables
     * when first used). {@code restored} keeps the kernel's account of the restore.
     */
    private Kernel start() {
        if (store == null) {
            return kernels.start(id);
        }
        Path dir;
        try {
            dir = store.snapshots().checkout(id);
        } catch (IOException e) {
            throw new RlmException(ErrorCode.KERNEL_UNAVAILABLE, "cannot prepare the snapshot of session " + id
                    + ": " + e.getMessage(), null, "check that the state directory is writable");
        }
        Kernel fresh = kernels.start(id, dir, store.directory());
        try {
            KernelReply reply = fresh.call(kernels.json().createObjectNode().put("op", "restore")
                    .put("dir", kernels.writableDirInside(dir).toString()), null, settings.maxTimeout(),
                    settings.interruptGrace());
            if (!reply.ok()) {
                log.warn("session {}: snapshot not restored: {}", id, reply.body().path("message").asText());
            }
            restored = reply.body();
        } catch (KernelDiedException e) {
            fresh.close();
            throw new RlmException(ErrorCode.KERNEL_UNAVAILABLE, "the kernel died restoring session " + id
                    + "'s snapshot: " + e.getMessage(), null, "the snapshot may be too large for the memory limit");
        }
        return fresh;
    }

    /**
     * The kernel died during a call ({@code timeout} its limit) or, with {@code timeout} null, since
     * the last call: closes it, starts a fresh one if it can, and says plainly what was lost.
     * {@code lost} names the variables no snapshot holds, {@code snapshotAt} when the last snapshot
     * was taken.
     */
    ObjectNode replace(KernelDiedException e, Duration timeout, Set<String> lost, Instant snapshotAt) {
        Kernel dead = kernel;
        kernel = null;
        restarts++;
        if (dead != null) {
            dead.close();
        }
        String fresh;
        try {
            restored = null;
            kernel = start();
            fresh = "a fresh kernel is ready";
        } catch (RlmException startFailure) {
            fresh = "a fresh kernel could not be started yet (" + startFailure.getMessage() + "); the next call retries";
        }
        boolean betweenCalls = timeout == null;
        boolean ownDeath = e.reason() == KernelDiedException.Cause.CRASHED
                || e.reason() == KernelDiedException.Cause.KILLED_AFTER_TIMEOUT;
        String what = betweenCalls ? (ownDeath ? "The kernel had died since the last call (" + e.exit() + ")"
                : "Since the last call, " + e.getMessage())
                : e.reason() == KernelDiedException.Cause.KILLED_AFTER_TIMEOUT
                ? "the code ran past its %s s timeout and ignored the interrupt, so the kernel was killed"
                        .formatted(Text.seconds(timeout))
                : e.getMessage();
        String failedCall = betweenCalls ? "" : " (and any change the failed call itself was making)";
        ObjectNode body = kernels.json().createObjectNode();
        body.put("status", switch (e.reason()) {
            case KILLED_AFTER_TIMEOUT, STOPPED -> "killed";
            case CRASHED, PROTOCOL_VIOLATION -> "crashed";
        });
        body.put("session_id", id);
        if (store == null) {
            body.put("message", what + ". ALL VARIABLES OF THIS SESSION WERE LOST: reload the data; " + fresh + ".");
            body.put("variables_lost", true);
        } else {
            String from = snapshotAt == null ? "the session's snapshot" : "the snapshot of " + snapshotAt;
            String back = restored == null ? "" : " (%d variables, %d functions and classes)"
                    .formatted(restored.path("spilled").size(), restored.path("restored").size());
            body.put("message", what + ". " + fresh.substring(0, 1).toUpperCase() + fresh.substring(1)
                    + (kernel == null ? "" : " with " + from + back) + ". " + (lost.isEmpty()
                            ? "Nothing newer than the snapshot was lost" + (betweenCalls ? "."
                                    : ", except any change the failed call itself was making.")
                            : "Lost, because they were newer than the snapshot or could not be saved: "
                                    + String.join(", ", lost) + failedCall + "; redo the steps that made them.")
                    + (betweenCalls && kernel != null ? " This call ran on the fresh kernel." : ""));
            body.put("variables_lost", !lost.isEmpty());
            body.set("lost_variables", kernels.json().valueToTree(List.copyOf(lost)));
            body.put("snapshot_at", snapshotAt == null ? null : snapshotAt.toString());
        }
        body.put("kernel_exit", e.exit());
        body.put("kernel_restarts", restarts);
        return body;
    }
}

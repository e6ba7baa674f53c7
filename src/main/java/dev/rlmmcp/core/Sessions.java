package dev.rlmmcp.core;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.llm.LlmLimits;
import dev.rlmmcp.llm.LlmService;
import dev.rlmmcp.store.SessionDatabase.StoredSession;
import dev.rlmmcp.store.StateStore;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * All sessions of this server: named ones made by rlm_init_context, and one default session per
 * client connection; any of them is found by id from any connection. A default session that holds no
 * variables ends with its connection; one that holds some stays, for any connection that has its id.
 * Idle sessions are swept: their kernels are stopped, and they stay listed as expired (a default
 * session whose connection is gone and that holds no variables is dropped instead). With a
 * {@link StateStore}, sessions are written to it as they change and read back at start: a restarted
 * server has them all, under the same ids; an idle session's kernel is released after a snapshot and
 * its state stays as it was. In a cluster, only the sessions {@link Ownership} says this node holds are
 * run here: a new one is claimed, one another node held is taken over if that node is gone, and the
 * sessions are dropped at once when the node loses its lease ({@link #fence}) or handed over at SIGTERM.
 */
public final class Sessions implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Sessions.class);
    static final String DEFAULT_NAME = "default";
    private static final long RECLAIM_EVERY_S = 5;

    private final KernelFactory kernels;
    private final LlmService llm;
    private final CompletableFuture<StateStore> opening;
    private final Limits defaultLimits;
    private final Ownership ownership;
    private volatile boolean handingOver;
    private volatile StateStore store;
    private volatile boolean restored;
    private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();
    private final Map<String, Session> byId = new ConcurrentHashMap<>();
    private final Map<String, Session> byConnection = new ConcurrentHashMap<>();
    private final ScheduledExecutorService sweeper = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon().name("session-sweeper").factory());

    public Sessions(KernelFactory kernels) {
        this(kernels, LlmService.samplingOnly(kernels.json()), CompletableFuture.completedFuture(null));
    }

    public Sessions(KernelFactory kernels, LlmService llm) {
        this(kernels, llm, CompletableFuture.completedFuture(null));
    }

    public Sessions(KernelFactory kernels, StateStore store) {
        this(kernels, LlmService.samplingOnly(kernels.json()), store);
    }

    /** Sessions kept in {@code store} (null: in memory only), those already there read back. */
    public Sessions(KernelFactory kernels, LlmService llm, StateStore store) {
        this(kernels, llm, CompletableFuture.completedFuture(store));
    }

    /**
     * Sessions kept in the store being opened (completing with null: in memory only). Nothing waits
     * for it until the first call that needs the sessions, so opening SQLite is off the start-up path.
     */
    public Sessions(KernelFactory kernels, LlmService llm, CompletableFuture<StateStore> opening) {
        this(kernels, llm, opening, Limits.NONE);
    }

    /**
     * As {@link #Sessions(KernelFactory, LlmService, CompletableFuture)}, with the guardrails a session
     * gets where its creator sets none ({@code --max-steps}, {@code --max-runtime-ms}, {@code --budget-limit}).
     */
    public Sessions(
            KernelFactory kernels, LlmService llm, CompletableFuture<StateStore> opening, Limits defaultLimits) {
        this(kernels, llm, opening, defaultLimits, Ownership.SINGLE_NODE);
    }

    /** As above, running only the sessions {@code ownership} says this node holds (cluster mode). */
    public Sessions(
            KernelFactory kernels,
            LlmService llm,
            CompletableFuture<StateStore> opening,
            Limits defaultLimits,
            Ownership ownership) {
        this.kernels = kernels;
        this.ownership = ownership;
        this.llm = llm;
        this.opening = opening;
        this.defaultLimits = defaultLimits;
        IdleKernels idleKernels = new IdleKernels(kernels, byId::values, () -> store != null, () -> restored);
        kernels.budget().releaseWith(idleKernels::releaseIdlest);
        sweeper.scheduleWithFixedDelay(idleKernels::reclaim, RECLAIM_EVERY_S, RECLAIM_EVERY_S, TimeUnit.SECONDS);
        Duration idle = kernels.settings().idleTimeout();
        long every = Math.max(1, Math.min(60, idle.toSeconds() / 4));
        sweeper.scheduleWithFixedDelay(() -> sweep(idle), every, every, TimeUnit.SECONDS);
    }

    /** The guardrails of a session whose creator sets none (each null: no limit). */
    public Limits defaultLimits() {
        return defaultLimits;
    }

    /** The store, once open, with the sessions it held read back (on the first call that needs them). */
    private StateStore store() {
        if (!restored) {
            synchronized (this) {
                if (!restored) {
                    try {
                        store = opening.join();
                    } catch (java.util.concurrent.CompletionException e) {
                        throw new RlmException(
                                ErrorCode.INTERNAL_ERROR,
                                "the state directory could not be opened: "
                                        + e.getCause().getMessage(),
                                null,
                                "restart the server with a usable --state-dir, or with --ephemeral");
                    }
                    if (store != null) {
                        readBack(store);
                    }
                    restored = true;
                }
            }
        }
        return store;
    }

    private void readBack(StateStore from) {
        Adoption.readBack(from, kernels, llm, sweeper).forEach(session -> byId.put(session.id(), session));
        if (!byId.isEmpty()) {
            log.info("{} sessions restored from {}", byId.size(), from.directory());
        }
    }

    /**
     * The session a call works on: the one named by {@code sessionId}, or the connection's default
     * session when no id is given (a fresh one if the last has expired).
     */
    public Session resolve(String sessionId, String connection) {
        store();
        if (sessionId == null) {
            Session session = byConnection.compute(
                    connection,
                    (c, current) -> current == null || current.state() == SessionState.EXPIRED
                            ? register(DEFAULT_NAME, Limits.NONE, llm.defaults(), null)
                            : current);
            return ownership.holds(session.id()) ? session : get(session.id());
        }
        return get(sessionId);
    }

    public Session get(String sessionId) {
        store();
        Session session = byId.get(sessionId);
        if (session != null && !ownership.holds(sessionId)) {
            lost(session);
            session = null;
        }
        if (session == null) {
            session = adopt(sessionId);
        }
        if (session == null) {
            throw new RlmException(
                    ErrorCode.SESSION_NOT_FOUND,
                    "no session with id " + sessionId,
                    "session_id",
                    "use an id returned by rlm_init_context or an earlier reply (rlm_sessions lists them), "
                            + "or omit session_id for this connection's default session");
        }
        return session;
    }

    /**
     * A session this node does not know but the snapshot store holds (another node snapshotted it):
     * taken into the local database and resumed here, its kernel restoring the snapshot on first use.
     */
    private synchronized Session adopt(String sessionId) {
        Session known = byId.get(sessionId);
        if (known != null || store == null || !SessionIds.wellFormed(sessionId)) {
            return known;
        }
        if (!ClusterRefusals.mayResume(ownership, sessionId, handingOver, clustered())) {
            return null;
        }
        try {
            Optional<StoredSession> stored =
                    Adoption.stored(store, sessionId, clustered(), kernels.json(), llm.defaults());
            if (stored.isEmpty()) {
                return null;
            }
            Session session = Session.restore(
                    sessionId, stored.get().record(), stored.get()::trace, kernels, llm, store, sweeper);
            store.database().adopt(stored.get());
            byId.put(session.id(), session);
            log.info("session {} taken from the snapshot store", sessionId);
            return session;
        } catch (IOException | RuntimeException e) {
            throw Adoption.failed(sessionId, e);
        }
    }

    private boolean clustered() {
        return ownership != Ownership.SINGLE_NODE;
    }

    /** A session this node ran but no longer holds (another node took it over): dropped, nothing written. */
    private void lost(Session session) {
        if (byId.remove(session.id(), session)) {
            byConnection.values().remove(session);
            log.warn("session {}: this node no longer holds it (another node took it over): dropped", session.id());
            Handover.stop(List.of(session));
        }
    }

    /** A new named session with its own guardrails. */
    public Session create(String name, Limits limits) {
        return create(name, limits, llm.defaults(), null);
    }

    /**
     * A new named session with its own guardrails and limits on llm_query, under {@code offeredId} if the
     * balancer offered one ({@link dev.rlmmcp.base.CallContext#offeredSessionId}) that the cluster does not know.
     */
    public Session create(String name, Limits limits, LlmLimits llmLimits, String offeredId) {
        store();
        return register(name, limits, llmLimits, offeredId);
    }

    /**
     * A session for a child RLM: kept in memory only, not listed, with {@code parent}'s limits, its kernel
     * from the warm pool where one fits, waiting for a place at most {@code wait} (null, or more than
     * --max-timeout-s: that long). The caller closes it.
     */
    public Session scratch(Session parent, Duration wait) {
        StateStore s = store();
        String id = "child-" + SessionIds.random();
        Path dir = s == null ? null : s.snapshots().root().resolve(id);
        return Session.scratch(id, parent, kernels, llm, dir, s == null ? null : s.directory(), wait);
    }

    public LlmService llm() {
        return llm;
    }

    /** Ends a session for good: its kernel stops and it is no longer listed. */
    public void delete(String sessionId) {
        Session session = get(sessionId);
        byId.remove(sessionId);
        byConnection.values().remove(session);
        forget(session);
    }

    private void forget(Session session) {
        session.discard();
        if (store != null) {
            String id = session.id();
            store.write("removal of session " + id, db -> db.delete(id));
            store.flush();
            try {
                store.snapshots().delete(id);
            } catch (IOException | RuntimeException e) {
                log.warn("session {} not removed from {}: {}", session.id(), store.directory(), e.toString());
            }
        }
    }

    /**
     * A connection has gone away: its default session ends if it holds no variables; one that does
     * stays, reachable by its id from any connection, until the idle rules or rlm_delete_session end it.
     */
    public void connectionClosed(String connection) {
        store();
        Session session = byConnection.remove(connection);
        if (session != null && !session.busy() && !session.holdsVariables()) {
            drop(session);
            log.debug("session {}: default session of a closed connection, no variables: removed", session.id());
        }
    }

    private void drop(Session session) {
        if (byId.remove(session.id(), session)) {
            forget(session);
        }
    }

    /** Every session, most recently active first. */
    public Collection<Session> all() {
        store();
        return byId.values().stream()
                .sorted(Comparator.comparing(Session::lastActive).reversed())
                .toList();
    }

    /** The kernel factory, for the wiring (cli) and core's tests; the layers above use {@link #settings()}. */
    public KernelFactory kernels() {
        return kernels;
    }

    /** What the layers above may know of the kernels' settings (timeouts, output cap, memory policy). */
    public KernelSettings settings() {
        return WireRecords.settings(kernels.settings());
    }

    /** The JSON mapper the server's replies and records are made with. */
    public ObjectMapper json() {
        return kernels.json();
    }

    /** The kernels now, for the health endpoint: sandbox, capacity in use, interpreter. */
    public KernelHealth health() {
        return WireRecords.health(kernels);
    }

    void sweep(Duration idle) {
        store();
        Instant cutoff = Instant.now().minus(idle);
        Set<Session> bound = Collections.newSetFromMap(new IdentityHashMap<>());
        bound.addAll(byConnection.values());
        for (Session session : List.copyOf(byId.values())) {
            if (!session.lastActive().isBefore(cutoff)) {
                continue;
            }
            if (DEFAULT_NAME.equals(session.name())
                    && !bound.contains(session)
                    && !session.busy()
                    && !session.holdsVariables()) {
                drop(session);
                log.info(
                        "session {} idle since {}: a default session whose connection is gone, without variables: "
                                + "removed",
                        session.id(),
                        session.lastActive());
                continue;
            }
            if ((session.hasKernel() || session.state() == SessionState.ACTIVE) && session.expire()) {
                log.info(
                        "session {} idle since {}: kernel stopped, state {}",
                        session.id(),
                        session.lastActive(),
                        session.state().wireName());
            }
        }
    }

    private Session register(String name, Limits limits, LlmLimits llmLimits, String offeredId) {
        if (handingOver) {
            throw ClusterRefusals.handingOver();
        }
        String id =
                offeredId != null && !byId.containsKey(offeredId) && ClusterRefusals.claimOffered(ownership, offeredId)
                        ? offeredId
                        : ClusterRefusals.claim(ownership, SessionIds.random());
        Session session =
                Session.create(id, name, limits, kernels, llm, llmLimits, store, sweeper, !DEFAULT_NAME.equals(name));
        byId.put(session.id(), session);
        return session;
    }

    /**
     * Self-fence (cluster mode, this node's lease could not be renewed in time): every kernel stopped at
     * once, every session dropped from memory, nothing written; another node resumes them.
     */
    public void fence() {
        List<Session> all = List.copyOf(byId.values());
        byId.clear();
        byConnection.clear();
        Handover.fence(all);
    }

    /** SIGTERM in a cluster: calls under way finish, each session is snapshotted, released, dropped (~{@code timeout}). */
    public void handOver(Duration timeout) {
        handingOver = true;
        try {
            store();
        } catch (RuntimeException e) {
            log.warn("the state store did not open: {}", e.toString());
        }
        List<Session> all = List.copyOf(byId.values());
        Handover.handOver(all, store, ownership, timeout);
        all.forEach(session -> byId.remove(session.id(), session));
        byConnection.clear();
    }

    /** This node's id in a cluster, else empty. */
    public Optional<String> nodeId() {
        return ownership.nodeId();
    }

    /** The cluster's sessions this node does not run, with their owner nodes (none for one node). */
    public List<OwnedElsewhere> elsewhere() {
        if (!clustered()) {
            return List.of();
        }
        store();
        return OwnedElsewhere.of(
                ownership.elsewhere(),
                byId.keySet(),
                json(),
                llm.defaults(),
                kernels.settings().defaultTimeout());
    }

    /** At shutdown, how long the sessions' last snapshots may take when no other time is given. */
    public static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(10);

    @Override
    public void close() {
        close(SHUTDOWN_TIMEOUT);
    }

    /**
     * Stops every session: first each one's changed variables are snapshotted, all at once, before any
     * kernel stops (waiting up to {@code timeout} for calls under way and for the writes), and what
     * could not be saved is logged by name; then the kernels stop. Returns false if another call
     * closed them (a shutdown hook and stdin's end may race): it has waited for that one to finish.
     */
    public boolean close(Duration timeout) {
        if (!closed.compareAndSet(false, true)) {
            try {
                stopped.get(timeout.toMillis() + 30_000, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                log.warn("shutdown still under way: {}", e.toString());
            }
            return false;
        }
        try {
            closeOnce(timeout);
        } finally {
            stopped.complete(null);
        }
        return true;
    }

    private void closeOnce(Duration timeout) {
        sweeper.shutdownNow();
        kernels.stopWarming();
        try {
            store();
        } catch (RuntimeException e) {
            log.warn("the state store did not open: {}", e.toString());
        }
        for (String connection : List.copyOf(byConnection.keySet())) {
            try {
                connectionClosed(connection);
            } catch (RuntimeException e) {
                log.warn("closing the default session of connection {}: {}", connection, e.toString());
            }
        }
        List<Session> all = List.copyOf(byId.values());
        try {
            if (store != null) {
                ShutdownSnapshots.save(
                        all.stream().filter(AgentSteps::notSuspendedAtStop).toList(), timeout);
            }
        } catch (RuntimeException e) {
            log.warn("snapshots at shutdown: {}", e.toString());
        } finally {
            all.parallelStream().forEach(session -> {
                try {
                    session.stopKernel();
                } catch (RuntimeException e) {
                    log.warn("session {}: stopping its kernel: {}", session.id(), e.toString());
                }
            });
            byId.clear();
            byConnection.clear();
            kernels.close();
            if (store != null) {
                store.close();
            }
        }
    }
}

package dev.rlmmcp.core;

import dev.rlmmcp.kernel.KernelFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Room for kernels: idle sessions' kernels stopped after a snapshot, idlest first (see {@link Sessions}). */
final class IdleKernels {

    private static final Logger log = LoggerFactory.getLogger(Sessions.class);

    private final KernelFactory kernels;
    private final Supplier<Collection<Session>> sessions;
    private final BooleanSupplier stored;
    private final BooleanSupplier restored;

    /** {@code stored}: the sessions have a store; {@code restored}: it has been read back. */
    IdleKernels(
            KernelFactory kernels,
            Supplier<Collection<Session>> sessions,
            BooleanSupplier stored,
            BooleanSupplier restored) {
        this.kernels = kernels;
        this.sessions = sessions;
        this.stored = stored;
        this.restored = restored;
    }

    /**
     * Makes room for another kernel: stops the kernel of the session idle longest, if idle at least
     * {@code idle}, that keeps its variables in a snapshot (they come back on its next call). Never a
     * running one; true if one stopped. For a kernel a session needs now ({@code idle} zero), a variable
     * no snapshot can hold may be lost (its next call names it); for one kept warm, nothing may.
     */
    boolean releaseIdlest(Duration idle) {
        if (!stored.getAsBoolean()) {
            return false;
        }
        Instant since = Instant.now().minus(idle);
        List<Session> idlest = sessions.get().stream()
                .filter(s ->
                        s.hasKernel() && !s.callRunning() && !s.lastActive().isAfter(since))
                .sorted(Comparator.comparing(Session::lastActive))
                .toList();
        for (Session session : idlest) {
            if (session.releaseIdle(idle.isZero())) {
                log.info(
                        "session {} idle since {}: kernel stopped after a snapshot, to make room for {} "
                                + "(--max-kernels / --max-total-memory-mb)",
                        session.id(),
                        session.lastActive(),
                        idle.isZero() ? "another" : "a kernel kept warm for new sessions");
                return true;
            }
        }
        return false;
    }

    /** Kernels that have grown past --max-total-memory-mb together: idle ones go, idlest first, until they fit. */
    void reclaim() {
        try {
            for (int i = 0;
                    i < sessions.get().size()
                            && restored.getAsBoolean()
                            && kernels.budget().over();
                    i++) {
                if (!releaseIdlest(Duration.ZERO)) {
                    return;
                }
                Thread.sleep(100); // the stopped kernel's process exits, and stops counting
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            log.warn("reclaiming idle kernels' memory: {}", e.toString());
        }
    }
}

package dev.rlmmcp.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sessions' last snapshots at shutdown: all written at once, each on its own thread, before any
 * kernel stops, so that one slow session does not use up the others' time; what one could not save
 * by the deadline is logged by name, with why.
 */
final class ShutdownSnapshots {

    private static final Logger log = LoggerFactory.getLogger(Sessions.class);

    private ShutdownSnapshots() {}

    static void save(List<Session> all, Duration timeout) {
        long started = System.nanoTime();
        Instant deadline = Instant.now().plus(timeout);
        Map<Session, CompletableFuture<Map<String, String>>> saving = startSaving(all, deadline);
        int complete = 0;
        for (Map.Entry<Session, CompletableFuture<Map<String, String>>> entry : saving.entrySet()) {
            Session session = entry.getKey();
            Map<String, String> notSaved = awaitSaved(session, entry.getValue(), deadline, timeout);
            if (notSaved.isEmpty()) {
                complete++;
            } else {
                log.warn(
                        "session {}: not saved at shutdown: {}",
                        session.id(),
                        notSaved.entrySet().stream()
                                .map(e -> e.getKey() + " (" + e.getValue() + ")")
                                .collect(java.util.stream.Collectors.joining(", ")));
            }
        }
        if (!all.isEmpty()) {
            log.info(
                    "shutdown: {} sessions saved in {} ms, {} of them with nothing left unsaved",
                    all.size(),
                    (System.nanoTime() - started) / 1_000_000,
                    complete);
        }
    }

    /** Starts each session's last snapshot on a thread of its own; the future holds what it left unsaved. */
    private static Map<Session, CompletableFuture<Map<String, String>>> startSaving(
            List<Session> all, Instant deadline) {
        Map<Session, CompletableFuture<Map<String, String>>> saving = new java.util.LinkedHashMap<>();
        for (Session session : all) {
            CompletableFuture<Map<String, String>> saved = new CompletableFuture<>();
            Thread.ofVirtual().name("shutdown-snapshot-" + session.id()).start(() -> {
                try {
                    saved.complete(session.saveBeforeStop(deadline));
                } catch (RuntimeException e) {
                    saved.complete(session.unsavedNow("the snapshot failed: " + e));
                }
            });
            saving.put(session, saved);
        }
        return saving;
    }

    /** What {@code session} left unsaved, waiting for its snapshot no later than {@code deadline}. */
    private static Map<String, String> awaitSaved(
            Session session, CompletableFuture<Map<String, String>> saved, Instant deadline, Duration timeout) {
        try {
            long left = Math.max(0, Duration.between(Instant.now(), deadline).toMillis());
            return saved.get(left, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            return session.unsavedNow("its snapshot was still being written at the shutdown deadline ("
                    + timeout.toSeconds() + " s, --shutdown-timeout-s)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return session.unsavedNow("shutdown was interrupted");
        } catch (java.util.concurrent.ExecutionException e) {
            return session.unsavedNow("the snapshot failed: " + e.getCause());
        }
    }
}

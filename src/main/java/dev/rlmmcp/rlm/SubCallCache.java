package dev.rlmmcp.rlm;

import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Identical sub-calls of one run, answered once: the first call of a key computes the answer, the
 * others (at the same time or later) wait for it. A failed answer is not kept, so a retry calls again.
 */
final class SubCallCache {

    /** What makes two sub-calls the same: kind, model, system prompt, messages, parameters, context digest. */
    record Key(String kind, String model, String system, List<String> messages, String parameters, String context) {}

    private final Map<Key, CompletableFuture<Object>> answers = new ConcurrentHashMap<>();

    /** The answer for {@code key}: computed now, or the one already computed (then {@code hit} runs). */
    @SuppressWarnings("unchecked")
    <T> T get(Key key, Callable<T> compute, Runnable hit) throws Exception {
        CompletableFuture<Object> mine = new CompletableFuture<>();
        CompletableFuture<Object> earlier = answers.putIfAbsent(key, mine);
        if (earlier != null) {
            try {
                T answer = (T) earlier.join();
                hit.run();
                return answer;
            } catch (RuntimeException e) {
                // the earlier call failed: compute it here
                return compute.call();
            }
        }
        try {
            T answer = compute.call();
            mine.complete(answer);
            return answer;
        } catch (Exception | Error e) {
            answers.remove(key, mine);
            mine.completeExceptionally(e);
            throw e;
        }
    }
}

package dev.rlmmcp.transport.stateless;

import dev.rlmmcp.transport.jsonrpc.JsonRpc;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;

/**
 * subscriptions/listen of protocol 2026-07-28: a long-lived stream that carries the notifications its
 * client opted in to, each tagged with the listen request's id as its subscription id, the first one
 * acknowledging what the server agreed to send. What this server lists never changes while it runs, so of
 * the filter it honours the tasks extension's {@code taskIds}: a notifications/tasks with the task as
 * tasks/get shows it, at once and at each change of its status. The stream ends when its client goes, or
 * at shutdown with the listen request's result. The transport provides the stream ({@link StatelessServer.Sink}): an event
 * stream on HTTP, the shared channel on stdio.
 */
final class Subscriptions {

    static final String METHOD = "subscriptions/listen";
    static final String META_SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId";

    private final Tasks tasks;
    /** Dresses the stream's closing result as every result of the revision. */
    private final UnaryOperator<Map<String, Object>> dressed;

    private final Set<Subscription> open = ConcurrentHashMap.newKeySet();

    Subscriptions(Tasks tasks, UnaryOperator<Map<String, Object>> dressed) {
        this.tasks = tasks;
        this.dressed = dressed;
    }

    /**
     * The refusal of a listen request whose filter is not one, or that names task ids without declaring
     * the tasks extension; null if it may be opened.
     */
    static McpSchema.JSONRPCResponse refusal(McpSchema.JSONRPCRequest call) {
        Map<?, ?> params = call.params() instanceof Map<?, ?> p ? p : Map.of();
        if (!(params.get("notifications") instanceof Map<?, ?> filter)) {
            return JsonRpc.errorAnswer(
                    call,
                    McpSchema.ErrorCodes.INVALID_PARAMS,
                    "params.notifications must be the filter of the "
                            + "notifications to send, e.g. {\"taskIds\": [\"...\"]}");
        }
        Object ids = filter.get("taskIds");
        if (ids != null && !(ids instanceof List<?> list && list.stream().allMatch(String.class::isInstance))) {
            return JsonRpc.errorAnswer(
                    call,
                    McpSchema.ErrorCodes.INVALID_PARAMS,
                    "params.notifications.taskIds must be a list of " + "task ids");
        }
        if (ids != null && !Tasks.declared(call)) {
            return Tasks.undeclared(call, "following tasks (params.notifications.taskIds)");
        }
        return null;
    }

    /** Opens the subscription {@code call} asks for (checked by {@link #refusal}) on {@code sink}. */
    void open(McpSchema.JSONRPCRequest call, StatelessServer.Sink sink) {
        Object ids = ((Map<?, ?>) ((Map<?, ?>) call.params()).get("notifications")).get("taskIds");
        Set<String> followed = ids == null
                ? Set.of()
                : tasks.known(((List<?>) ids).stream().map(String.class::cast).toList());
        Map<String, Object> accepted = new LinkedHashMap<>();
        if (ids != null) {
            accepted.put("taskIds", List.copyOf(followed));
        }
        Subscription subscription = new Subscription(call.id(), sink);
        open.add(subscription);
        subscription.notify("notifications/subscriptions/acknowledged", Map.of("notifications", accepted));
        subscription.unwatch = tasks.watch(followed, task -> subscription.notify("notifications/tasks", task));
        if (subscription.gone) {
            subscription.unwatch.run(); // gone while the watch began
        }
    }

    /** At shutdown: each stream ends with the listen request's result. */
    void close() {
        for (Subscription subscription : List.copyOf(open)) {
            subscription.end(true);
        }
    }

    private final class Subscription {

        private final Object id;
        private final StatelessServer.Sink sink;
        private volatile Runnable unwatch = () -> {};
        private volatile boolean gone;

        Subscription(Object id, StatelessServer.Sink sink) {
            this.id = id;
            this.sink = sink;
        }

        void notify(String method, Map<String, Object> params) {
            Map<String, Object> tagged = new LinkedHashMap<>(params);
            tagged.put("_meta", Map.of(META_SUBSCRIPTION, id));
            if (!gone && !sink.send(new McpSchema.JSONRPCNotification(McpSchema.JSONRPC_VERSION, method, tagged))) {
                gone = true;
                end(false);
            }
        }

        /** Stops following; with {@code result}, the stream's last message is the listen request's result. */
        void end(boolean result) {
            unwatch.run();
            if (!open.remove(this)) {
                return;
            }
            if (result) {
                Map<String, Object> closing = new LinkedHashMap<>();
                closing.put("resultType", "complete");
                closing.put("_meta", Map.of(META_SUBSCRIPTION, id));
                sink.send(McpSchema.JSONRPCResponse.result(id, dressed.apply(closing)));
            }
            sink.close();
        }
    }
}

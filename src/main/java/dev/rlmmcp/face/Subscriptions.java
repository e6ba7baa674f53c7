package dev.rlmmcp.face;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * subscriptions/listen of protocol 2026-07-28: a long-lived event stream that carries the notifications its
 * client opted in to, each tagged with the listen request's id as its subscription id, the first one
 * acknowledging what the server agreed to send. What this server lists never changes while it runs, so of
 * the filter it honours the tasks extension's {@code taskIds}: a notifications/tasks with the task as
 * tasks/get shows it, at once and at each change of its status. The stream ends when its client closes it,
 * or at shutdown with the listen request's result.
 */
final class Subscriptions {

    static final String METHOD = "subscriptions/listen";
    static final String META_SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId";
    private static final byte[] KEEP_ALIVE = ": keep-alive\n\n".getBytes(StandardCharsets.UTF_8);
    private static final long KEEP_ALIVE_SECONDS = 15;

    private final McpJsonMapper mapper;
    private final Tasks tasks;
    /** Dresses the stream's closing result as every result of the revision. */
    private final UnaryOperator<Map<String, Object>> dressed;
    private final Set<Stream> streams = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService keepAlive = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon().name("mcp-listen-keepalive").factory());

    Subscriptions(McpJsonMapper mapper, Tasks tasks, UnaryOperator<Map<String, Object>> dressed) {
        this.mapper = mapper;
        this.tasks = tasks;
        this.dressed = dressed;
        keepAlive.scheduleAtFixedRate(() -> streams.forEach(Stream::keepAlive), KEEP_ALIVE_SECONDS, KEEP_ALIVE_SECONDS,
                TimeUnit.SECONDS);
    }

    /**
     * Opens the stream {@code call} asks for on {@code response} and returns null; or returns the refusal
     * of a filter that is not one, or of task ids from a request that does not declare the tasks extension.
     */
    McpSchema.JSONRPCResponse listen(HttpServletRequest request, HttpServletResponse response,
            McpSchema.JSONRPCRequest call, boolean sse) throws IOException {
        Map<?, ?> params = call.params() instanceof Map<?, ?> p ? p : Map.of();
        if (!(params.get("notifications") instanceof Map<?, ?> filter)) {
            return error(call, McpSchema.ErrorCodes.INVALID_PARAMS, "params.notifications must be the filter of the "
                    + "notifications to send, e.g. {\"taskIds\": [\"...\"]}");
        }
        Object ids = filter.get("taskIds");
        if (ids != null && !(ids instanceof List<?> list && list.stream().allMatch(String.class::isInstance))) {
            return error(call, McpSchema.ErrorCodes.INVALID_PARAMS, "params.notifications.taskIds must be a list of "
                    + "task ids");
        }
        if (ids != null && !Tasks.declared(call)) {
            return Tasks.undeclared(call, "following tasks (params.notifications.taskIds)");
        }
        if (!sse) {
            return error(call, McpSchema.ErrorCodes.INVALID_REQUEST, "subscriptions/listen answers with an event "
                    + "stream: the Accept header must allow text/event-stream");
        }
        Map<String, Object> accepted = new LinkedHashMap<>();
        Set<String> followed = ids == null ? Set.of() : tasks.known(((List<?>) ids).stream().map(String.class::cast)
                .toList());
        if (ids != null) {
            accepted.put("taskIds", List.copyOf(followed));
        }
        response.setStatus(200);
        response.setContentType("text/event-stream");
        response.setCharacterEncoding("UTF-8");
        response.setHeader("Cache-Control", "no-cache");
        response.setHeader("X-Accel-Buffering", "no");
        AsyncContext async = request.startAsync();
        async.setTimeout(0);
        Stream stream = new Stream(call.id(), async, response.getOutputStream());
        streams.add(stream);
        async.addListener(stream);
        stream.notify("notifications/subscriptions/acknowledged", Map.of("notifications", accepted));
        stream.follow(tasks.watch(followed, task -> stream.notify("notifications/tasks", task)));
        return null;
    }

    /** At shutdown: each stream ends with the listen request's result. */
    void close() {
        keepAlive.shutdownNow();
        for (Stream stream : List.copyOf(streams)) {
            stream.end();
        }
    }

    private static McpSchema.JSONRPCResponse error(McpSchema.JSONRPCRequest call, int code, String message) {
        return McpSchema.JSONRPCResponse.error(call.id(), new McpSchema.JSONRPCResponse.JSONRPCError(code, message,
                null));
    }

    /** One open listen stream. */
    private final class Stream implements AsyncListener {

        private final Object id;
        private final AsyncContext async;
        private final OutputStream out;
        private volatile Runnable unwatch = () -> {
        };
        private boolean ended;

        Stream(Object id, AsyncContext async, OutputStream out) {
            this.id = id;
            this.async = async;
            this.out = out;
        }

        /** {@code unwatch} stops what the stream follows, when it ends (at once if it has ended already). */
        void follow(Runnable unwatch) {
            this.unwatch = unwatch;
            synchronized (this) {
                if (!ended) {
                    return;
                }
            }
            unwatch.run();
        }

        void notify(String method, Map<String, Object> params) {
            Map<String, Object> tagged = new LinkedHashMap<>(params);
            tagged.put("_meta", Map.of(META_SUBSCRIPTION, id));
            send(new McpSchema.JSONRPCNotification(McpSchema.JSONRPC_VERSION, method, tagged));
        }

        private synchronized void send(McpSchema.JSONRPCMessage message) {
            try {
                write(("event: message\ndata: " + mapper.writeValueAsString(message) + "\n\n")
                        .getBytes(StandardCharsets.UTF_8));
            } catch (IOException e) {
                complete();
            }
        }

        synchronized void keepAlive() {
            write(KEEP_ALIVE);
        }

        private void write(byte[] bytes) {
            if (ended) {
                return;
            }
            try {
                out.write(bytes);
                out.flush();
            } catch (IOException | RuntimeException e) {
                complete();
            }
        }

        /** Ends the stream with the listen request's result, as the server does at shutdown. */
        void end() {
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("resultType", "complete");
            result.put("_meta", Map.of(META_SUBSCRIPTION, id));
            send(McpSchema.JSONRPCResponse.result(id, dressed.apply(result)));
            complete();
        }

        private void complete() {
            try {
                async.complete();
            } catch (IllegalStateException alreadyDone) {
                // the container ended it first
            }
            ended();
        }

        private void ended() {
            synchronized (this) {
                if (ended) {
                    return;
                }
                ended = true;
            }
            streams.remove(this);
            unwatch.run();
        }

        @Override
        public void onComplete(AsyncEvent event) {
            ended();
        }

        @Override
        public void onTimeout(AsyncEvent event) {
            ended();
        }

        @Override
        public void onError(AsyncEvent event) {
            ended();
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
        }
    }
}

package dev.rlmmcp.transport.stateless;

import dev.rlmmcp.transport.jsonrpc.JsonRpc;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * The tasks extension ({@code io.modelcontextprotocol/tasks}) of protocol 2026-07-28: a call that runs
 * long becomes a task, answered at once with its id; the client polls it with tasks/get (which shows
 * what it asks, then its result or error), answers what it asks with tasks/update, and stops it with
 * tasks/cancel; a subscriptions/listen stream that names it hears each change of its status
 * ({@link Subscriptions}). Only for requests that declare the extension in their client capabilities;
 * the server decides which calls become tasks (see {@link TaskSupport} and {@link InputRounds}). Tasks
 * live in this server process, each for {@link #TTL_MS} from its creation.
 */
final class Tasks {

    static final String EXTENSION = "io.modelcontextprotocol/tasks";
    static final String GET = "tasks/get";
    static final String UPDATE = "tasks/update";
    static final String CANCEL = "tasks/cancel";
    /** Methods of the extension's first version, gone from this one. */
    private static final Set<String> REMOVED = Set.of("tasks/result", "tasks/list");

    static final long TTL_MS = 3_600_000;
    static final long POLL_MS = 500;
    private static final TypeRef<Map<String, Object>> MAP = new TypeRef<>() {};

    private static final class Task {
        final String id;
        final ResumableCall call;
        final Instant createdAt = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        volatile Instant cancelledAt;

        Task(String id, ResumableCall call) {
            this.id = id;
            this.call = call;
        }
    }

    /** A listen stream's interest: the tasks it follows, and the status each was last told with. */
    private record Watch(Set<String> taskIds, Consumer<Map<String, Object>> listener, Map<String, String> told) {}

    private final McpJsonMapper mapper;
    private final Map<String, Task> tasks = new ConcurrentHashMap<>();
    /** What every task id starts with: in a cluster, this node's sealed name, so any node can route to it. */
    private volatile String tag = "";

    private final List<Watch> watches = new CopyOnWriteArrayList<>();
    /** Looks again a moment after a change: a call's requests show as input_required once it has been quiet. */
    private final ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon().name("mcp-task-status").factory());

    void tag(String tag) {
        this.tag = tag;
    }

    Tasks(McpJsonMapper mapper) {
        this.mapper = mapper;
    }

    /**
     * Tells {@code listener} each task of {@code taskIds} as tasks/get shows it, now (those that exist)
     * and whenever its status changes, until the returned action is run.
     */
    Runnable watch(Set<String> taskIds, Consumer<Map<String, Object>> listener) {
        Watch watch = new Watch(Set.copyOf(taskIds), listener, new ConcurrentHashMap<>());
        watches.add(watch);
        for (String id : watch.taskIds()) {
            Task task = tasks.get(id);
            if (task != null) {
                tell(watch, task);
            }
        }
        return () -> watches.remove(watch);
    }

    /** The ids among these of tasks that exist. */
    Set<String> known(Collection<String> ids) {
        return ids.stream().filter(tasks::containsKey).collect(Collectors.toUnmodifiableSet());
    }

    private void changed(Task task) {
        if (tellWatches(task) && !later.isShutdown()) {
            later.schedule(() -> tellWatches(task), 2 * ResumableCall.QUIET_NANOS, TimeUnit.NANOSECONDS);
        }
    }

    /** Tells the watches that follow {@code task} what changed; false if none follows it. */
    private boolean tellWatches(Task task) {
        boolean watched = false;
        for (Watch watch : watches) {
            if (watch.taskIds().contains(task.id)) {
                tell(watch, task);
                watched = true;
            }
        }
        return watched;
    }

    private void tell(Watch watch, Task task) {
        Map<String, Object> detail = described(task, true);
        String status = (String) detail.get("status");
        synchronized (watch) {
            if (!status.equals(watch.told().put(task.id, status))) {
                watch.listener().accept(detail);
            }
        }
    }

    /** Whether the extension's methods, removed ones included, are this request's. */
    static boolean handles(String method) {
        return method.startsWith("tasks/");
    }

    /** Whether a request declares the extension in its client capabilities. */
    static boolean declared(McpSchema.JSONRPCRequest call) {
        Map<String, Object> meta = StatelessProtocol.meta(call);
        return meta != null
                && meta.get(StatelessProtocol.META_CAPABILITIES) instanceof Map<?, ?> capabilities
                && capabilities.get("extensions") instanceof Map<?, ?> extensions
                && extensions.containsKey(EXTENSION);
    }

    /** The refusal of a request that needs the extension but does not declare it (HTTP 400). */
    static McpSchema.JSONRPCResponse undeclared(McpSchema.JSONRPCRequest call, String what) {
        return McpSchema.JSONRPCResponse.error(
                call.id(),
                new McpSchema.JSONRPCResponse.JSONRPCError(
                        StatelessProtocol.MISSING_CLIENT_CAPABILITY,
                        what + " needs the " + EXTENSION + " extension, which "
                                + "this request's client capabilities do not declare; declare it in _meta "
                                + StatelessProtocol.META_CAPABILITIES + ".extensions",
                        Map.of("requiredCapabilities", Map.of("extensions", Map.of(EXTENSION, Map.of())))));
    }

    /** Makes {@code call}, still running, a task: the CreateTaskResult to answer with. */
    Map<String, Object> adopt(ResumableCall call) {
        Task task = new Task(tag + UUID.randomUUID(), call);
        tasks.put(task.id, task);
        call.onChange(() -> changed(task));
        Map<String, Object> created = new LinkedHashMap<>();
        created.put("resultType", "task");
        created.putAll(described(task, false));
        return created;
    }

    /** Answers tasks/get, tasks/update and tasks/cancel, and refuses the extension's removed methods. */
    McpSchema.JSONRPCResponse handle(McpSchema.JSONRPCRequest call) {
        if (REMOVED.contains(call.method()) || !Set.of(GET, UPDATE, CANCEL).contains(call.method())) {
            return JsonRpc.errorAnswer(
                    call,
                    McpSchema.ErrorCodes.METHOD_NOT_FOUND,
                    "method not found: " + call.method()
                            + (REMOVED.contains(call.method())
                                    ? " is not part of the " + EXTENSION + " extension of protocol "
                                            + StatelessProtocol.VERSION + "; tasks/get shows a task's result"
                                    : ""));
        }
        if (!declared(call)) {
            return undeclared(call, call.method());
        }
        Map<?, ?> params = call.params() instanceof Map<?, ?> p ? p : Map.of();
        if (!(params.get("taskId") instanceof String id)) {
            return JsonRpc.errorAnswer(
                    call,
                    McpSchema.ErrorCodes.INVALID_PARAMS,
                    "params.taskId must be the id of a task, as " + "the CreateTaskResult gave it");
        }
        Task task = tasks.get(id);
        if (task == null) {
            return JsonRpc.errorAnswer(
                    call,
                    McpSchema.ErrorCodes.INVALID_PARAMS,
                    "no task " + id + ": it never existed, or it " + "was forgotten " + TTL_MS / 60_000
                            + " minutes after its creation or when the server restarted");
        }
        return switch (call.method()) {
            case GET -> McpSchema.JSONRPCResponse.result(call.id(), complete(described(task, true)));
            case UPDATE -> update(call, task, params.get("inputResponses"));
            default -> {
                cancel(task, "the task was cancelled");
                yield McpSchema.JSONRPCResponse.result(call.id(), complete(Map.of()));
            }
        };
    }

    private McpSchema.JSONRPCResponse update(McpSchema.JSONRPCRequest call, Task task, Object inputs) {
        if (!(inputs instanceof Map<?, ?> answers)) {
            return JsonRpc.errorAnswer(
                    call,
                    McpSchema.ErrorCodes.INVALID_PARAMS,
                    "params.inputResponses must be an object that maps "
                            + "the key of each input request (tasks/get shows them) to its result");
        }
        Map<String, Object> given = new LinkedHashMap<>();
        answers.forEach((k, v) -> given.put(String.valueOf(k), v));
        try {
            task.call.answer(given);
        } catch (ResumableCall.InvalidInput e) {
            return JsonRpc.errorAnswer(call, McpSchema.ErrorCodes.INVALID_PARAMS, e.getMessage());
        }
        return McpSchema.JSONRPCResponse.result(call.id(), complete(Map.of()));
    }

    private static Map<String, Object> complete(Map<String, Object> result) {
        Map<String, Object> complete = new LinkedHashMap<>();
        complete.put("resultType", "complete");
        complete.putAll(result);
        return complete;
    }

    /** A task as the extension describes it; {@code detailed}: with what it asks, its result or its error. */
    private Map<String, Object> described(Task task, boolean detailed) {
        ResumableCall.Progress progress = task.call.progress();
        McpSchema.JSONRPCResponse answer = progress.answer();
        String status = task.cancelledAt != null
                ? "cancelled"
                : progress.failure() != null || answer != null && answer.error() != null
                        ? "failed"
                        : answer != null ? "completed" : progress.asked().isEmpty() ? "working" : "input_required";
        Instant updated = progress.changedAt().truncatedTo(ChronoUnit.MILLIS);
        if (task.cancelledAt != null && task.cancelledAt.isAfter(updated)) {
            updated = task.cancelledAt;
        }
        Map<String, Object> described = new LinkedHashMap<>();
        described.put("taskId", task.id);
        described.put("status", status);
        described.put("createdAt", task.createdAt.toString());
        described.put("lastUpdatedAt", (updated.isBefore(task.createdAt) ? task.createdAt : updated).toString());
        described.put("ttlMs", TTL_MS);
        described.put("pollIntervalMs", POLL_MS);
        if (!detailed) {
            return described;
        }
        switch (status) {
            case "input_required" -> described.put("inputRequests", InputRounds.inputRequests(progress.asked()));
            case "completed" -> described.put("result", complete(mapper.convertValue(answer.result(), MAP)));
            case "failed" ->
                described.put(
                        "error",
                        answer != null && answer.error() != null
                                ? Map.of(
                                        "code",
                                        answer.error().code(),
                                        "message",
                                        answer.error().message())
                                : failure(progress.failure()));
            default -> {}
        }
        return described;
    }

    private static Map<String, Object> failure(RuntimeException e) {
        McpSchema.JSONRPCResponse.JSONRPCError error = JsonRpc.failure(e);
        return Map.of("code", error.code(), "message", error.message());
    }

    private void cancel(Task task, String why) {
        ResumableCall.Progress progress = task.call.progress();
        if (task.cancelledAt == null && progress.answer() == null && progress.failure() == null) {
            task.cancelledAt = Instant.now().truncatedTo(ChronoUnit.MILLIS);
            changed(task);
            task.call.cancel(why);
        }
    }

    /** Forgets the tasks created more than {@link #TTL_MS} ago, stopping those still running. */
    void sweep() {
        Instant cutoff = Instant.now().minusMillis(TTL_MS);
        for (Task task : new ArrayList<>(tasks.values())) {
            if (task.createdAt.isBefore(cutoff) && tasks.remove(task.id, task)) {
                cancel(task, "the task outlived its time to live of " + TTL_MS / 60_000 + " minutes");
            }
        }
    }

    /**
     * At shutdown: what the tasks ask fails, since no client can answer it now; their steps end as every
     * running call does at shutdown (their sessions' variables saved first).
     */
    void close() {
        later.shutdownNow();
        watches.clear();
        for (Task task : List.copyOf(tasks.values())) {
            task.call.abandon("the server is shutting down");
        }
        tasks.clear();
    }
}
